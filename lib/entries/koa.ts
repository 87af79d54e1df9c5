// 'bulwark/koa': the inbound guard as Koa middleware (Koa 2 and 3).
export * from '../guards/inbound/inbound-exports'
export { koaGuard } from '../adapters/koa/koa'
export type { KoaContextLike, KoaMiddleware } from '../adapters/koa/koa'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
