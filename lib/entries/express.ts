// 'bulwark/express': the inbound guard as Express middleware (Express 4 and 5).
export * from '../integrations/inbound-exports'
export { expressGuard } from '../integrations/express'
export type { ExpressMiddleware, ExpressNext, ExpressRequest } from '../integrations/express'
