// 'bulwark/fastify': the inbound guard as a Fastify plugin (Fastify 4 and 5).
export * from '../guards/inbound/inbound-exports'
export { fastifyGuard } from '../adapters/fastify/fastify'
export type { FastifyGuardOptions, FastifyInstanceLike, FastifyRequestLike } from '../adapters/fastify/fastify'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when the variable is set
if (process.env.BULWARK_RULES) require('./rules-env') // bulwark:separate
