// 'bulwark/http': the inbound guard for node:http and node:http2, and the framework-neutral InboundGuard the other
// inbound adapters are built on (for a server of your own). Loaded only by those who import it (docs/vocabulary.md).
export {
  BYPASS,
  CALLBACK_FAILED,
  InboundGuard,
  PROBE_NOT_READY,
  PROBE_READY,
  QUEUED,
} from '../guards/inbound/inbound-guard'
export type { Waiter } from '../admission/queue/admission-queue'
export type { InboundGuardStats, RequestAccess } from '../guards/inbound/inbound-guard'
export type { GlobalRateLimiter, KeyedRateLimiter } from '../guards/inbound/gateway-options'
export * from '../guards/inbound/inbound-exports'
export { httpGuard } from '../adapters/http/http'
export type { GuardedListener, NodeRequest, NodeResponse, RequestListener } from '../adapters/http/http'
export { http2StreamGuard } from '../adapters/http/http2-stream'
export type { GuardedStreamListener, Http2StreamRequest, StreamListener } from '../adapters/http/http2-stream'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
