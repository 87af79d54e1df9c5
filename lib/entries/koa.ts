// 'bulwark/koa': the inbound guard as Koa middleware (Koa 2 and 3).
export * from '../guards/inbound/inbound-exports'
export { koaGuard } from '../adapters/koa/koa'
export type { KoaContextLike, KoaMiddleware } from '../adapters/koa/koa'
