// 'bulwark/express': the inbound guard as Express middleware (Express 4 and 5).
export * from '../guards/inbound/inbound-exports'
export { expressGuard } from '../adapters/express/express'
export type { ExpressMiddleware, ExpressNext, ExpressRequest } from '../adapters/express/express'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
