// 'bulwark/hono': the inbound guard as Hono middleware (Hono 4; on Node with @hono/node-server).
export * from '../guards/inbound/inbound-exports'
export { honoGuard } from '../adapters/hono/hono'
export type { HonoContextLike, HonoMiddleware, HonoNext } from '../adapters/hono/hono'
