// NestJS 11, installed apart in test/peers/nestjs-v11 (its packages require one another by name): the guard takes
// its HttpException from the `nest` option, as an application with its own copy of @nestjs/common would give it.
import { type NestKit, nestSuite } from './nestjs-suite'

type Nest11 = Pick<NestKit, 'common' | 'core'> & { ExpressAdapter: new () => object; FastifyAdapter: new () => object }
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { common, core, ExpressAdapter, FastifyAdapter } = require('nestjs-v11') as Nest11

nestSuite({
  label: '11',
  common,
  core,
  adapters: [
    ['Express', () => new ExpressAdapter(), '*path'],
    ['Fastify', () => new FastifyAdapter(), '*'],
  ],
})
