// 'bulwark/undici': the outbound guard for undici (and Node's fetch): breakers, adaptive bulkheads and retries.
export { undiciGuard } from '../integrations/undici-guard'
export type { UndiciGuardOptions, UndiciInterceptor } from '../integrations/undici-guard'
export type { DispatchHandler } from '../integrations/undici-handler-api'
export type { CallbackHandler } from '../integrations/callback-guarded-request'
export type { ControllerHandler, DispatchController } from '../integrations/controller-guarded-request'
export type { BreakerChoice } from '../integrations/breaker-port'
export type { BulkheadChoice } from '../integrations/bulkhead-port'
