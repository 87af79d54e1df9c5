import 'reflect-metadata'
import * as common from '@nestjs/common'
import * as core from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'

import { nestGuard } from '../../lib/entries/nestjs'
import { type NestKit, nestSuite } from './nestjs-suite'

/** Type-checked only (npm run typecheck): a NestGuard is what Nest's own types take as a guard and an interceptor. */
export function acceptedByNestTypes(app: common.INestApplication): void {
  const guard = nestGuard()
  app.useGlobalGuards(guard)
  app.useGlobalInterceptors(guard)
}

nestSuite({
  label: '12',
  common: common as unknown as NestKit['common'],
  core: core as unknown as NestKit['core'],
  adapters: [
    ['Express', () => new ExpressAdapter(), '{*path}'],
    ['Fastify', () => new FastifyAdapter(), '*'],
  ],
})
