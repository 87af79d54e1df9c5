// 'bulwark/koa': the inbound guard as Koa middleware (Koa 2 and 3).
export * from '../integrations/inbound-exports'
export { koaGuard } from '../integrations/koa'
export type { KoaContextLike, KoaMiddleware } from '../integrations/koa'
