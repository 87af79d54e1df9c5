// 'bulwark/fastify': the inbound guard as a Fastify plugin (Fastify 4 and 5).
export * from '../guards/inbound/inbound-exports'
export { fastifyGuard } from '../adapters/fastify/fastify'
export type { FastifyGuardOptions, FastifyInstanceLike, FastifyRequestLike } from '../adapters/fastify/fastify'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
