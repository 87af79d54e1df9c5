// 'bulwark/fastify': the inbound guard as a Fastify plugin (Fastify 4 and 5).
export * from '../integrations/inbound-exports'
export { fastifyGuard } from '../integrations/fastify'
export type { FastifyGuardOptions, FastifyInstanceLike, FastifyRequestLike } from '../integrations/fastify'
