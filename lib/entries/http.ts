// 'bulwark/http': the inbound guard for node:http and node:http2, and the framework-neutral InboundGuard the other
// inbound adapters are built on (for a server of your own). Loaded only by those who import it (docs/vocabulary.md).
export { CALLBACK_FAILED, InboundGuard, QUEUED } from '../integrations/inbound-guard'
export type { Waiter } from '../policies/admission-queue'
export type { InboundGuardStats, RequestAccess } from '../integrations/inbound-guard'
export type { GlobalRateLimiter, KeyedRateLimiter } from '../integrations/inbound-options'
export * from '../integrations/inbound-exports'
export { httpGuard } from '../integrations/http'
export type { GuardedListener, NodeRequest, NodeResponse, RequestListener } from '../integrations/http'
export { http2StreamGuard } from '../integrations/http2-stream'
export type { GuardedStreamListener, Http2StreamRequest, StreamListener } from '../integrations/http2-stream'
