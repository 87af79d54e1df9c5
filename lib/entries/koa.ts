// 'bulwark/koa': the inbound guard as Koa middleware (Koa 2 and 3).
export * from '../guards/inbound/inbound-exports'
export { koaGuard } from '../adapters/koa/koa'
export type { KoaContextLike, KoaMiddleware } from '../adapters/koa/koa'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when the variable is set
if (process.env.BULWARK_RULES) require('./rules-env') // bulwark:separate
