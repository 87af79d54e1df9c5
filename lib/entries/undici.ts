// 'bulwark/undici': the outbound guard for undici (and Node's fetch): breakers, adaptive bulkheads and retries.
export { undiciGuard } from '../adapters/undici/undici-guard'
export type { UndiciGuardOptions, UndiciInterceptor } from '../adapters/undici/undici-guard'
export type { DispatchHandler } from '../adapters/undici/undici-handler-api'
export type { CallbackHandler } from '../guards/outbound/callback-guarded-request'
export type { ControllerHandler, DispatchController } from '../guards/outbound/controller-guarded-request'
export type { BreakerChoice } from '../guards/outbound/breaker-port'
export type { BulkheadChoice } from '../guards/outbound/bulkhead-port'
export type { UndiciDispatchOptions } from '../adapters/undici/undici-guard'
export type { OriginQuota, QuotaChoice, UpstreamQuota } from '../guards/outbound/origin-quotas'
export type { HeaderLookup } from '../guards/outbound/rate-limit-headers'
export type { CoalesceChoice } from '../guards/outbound/coalescing'
export type { RequestRouter, UndiciRouting } from '../adapters/undici/undici-routing'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
