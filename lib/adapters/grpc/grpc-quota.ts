import type { OriginQuota } from '../../guards/outbound/origin-quotas'
import { QuotaCall } from '../../guards/outbound/origin-quotas'
import { GrpcStatus } from './grpc-module'

/** The part of grpc-js's Metadata read here. */
interface MetadataLike {
  get(key: string): Array<string | Buffer>
}

interface Listener {
  onReceiveMetadata?(metadata: unknown, next?: unknown): void
  onReceiveMessage?(message: unknown, next?: unknown): void
  onReceiveStatus(status: { code: number; details?: string; metadata?: unknown }, next?: unknown): void
}

/** What the interceptor's calls offer (grpc-js InterceptingCallInterface). */
interface Call {
  start(metadata: unknown, listener: Listener): void
  sendMessageWithContext(context: unknown, message: unknown): void
  sendMessage(message: unknown): void
  startRead(): void
  halfClose(): void
  cancelWithStatus(status: number, details: string): void
  getPeer(): string
  getAuthContext?(): unknown
}

/**
 * A gRPC call that waits for its target's quota (docs/guide/integrations.md, "Quotas per origin") before it is
 * made: `make()` builds the guarded call once the quota is there (its breaker and bulkhead are asked then, so the
 * wait counts in neither), and what the caller sends meanwhile is held and passed on in order. A call the quota
 * refuses ends with RESOURCE_EXHAUSTED, never sent; RESOURCE_EXHAUSTED from the server counts as a 429, and the
 * answer's metadata (`retry-after`, `grpc-retry-pushback-ms`, the rate-limit headers) is learnt from.
 */
export function quotaCall<Request>(
  policy: OriginQuota<Request>,
  request: Request,
  make: () => Call,
  metadata: () => unknown,
): Call {
  const quota = new QuotaCall(policy)
  let inner: Call | undefined
  let cancelled: [number, string] | undefined
  const held: Array<(call: Call) => void> = []
  const later = (step: (call: Call) => void): void => {
    if (inner !== undefined) step(inner)
    else held.push(step)
  }
  return {
    start(md, listener) {
      let initial: MetadataLike | undefined
      const watching: Listener = {
        onReceiveMetadata: (m, next) => {
          initial = m as MetadataLike
          ;(listener.onReceiveMetadata as (m: unknown, n?: unknown) => void)?.(m, next)
        },
        onReceiveMessage: (m, next) => (listener.onReceiveMessage as (m: unknown, n?: unknown) => void)?.(m, next),
        onReceiveStatus: (status, next) => {
          const code = status.code === GrpcStatus.RESOURCE_EXHAUSTED ? 429 : status.code === 0 ? 200 : 500
          quota.answered(code, lookup(initial, status.metadata as MetadataLike | undefined))
          listener.onReceiveStatus(status, next)
        },
      }
      quota.take(request, undefined).then(
        () => {
          if (cancelled !== undefined) return
          inner = make()
          inner.start(md, watching)
          for (const step of held.splice(0)) step(inner)
        },
        (error: Error) => {
          if (cancelled !== undefined) return
          const details = `${error.message} (the quota of the target; rejected locally)`
          listener.onReceiveStatus({ code: GrpcStatus.RESOURCE_EXHAUSTED, details, metadata: metadata() })
        },
      )
    },
    sendMessageWithContext: (context, message) => later((c) => c.sendMessageWithContext(context, message)),
    sendMessage: (message) => later((c) => c.sendMessage(message)),
    startRead: () => later((c) => c.startRead()),
    halfClose: () => later((c) => c.halfClose()),
    cancelWithStatus(status, details) {
      if (inner !== undefined) return inner.cancelWithStatus(status, details)
      cancelled = [status, details]
      quota.reservation?.cancel()
    },
    getPeer: () => inner?.getPeer() ?? '',
    getAuthContext: () => inner?.getAuthContext?.() ?? null,
  }
}

/** Headers from the initial metadata and the trailers; `grpc-retry-pushback-ms` (gRFC A6) as retry-after-ms. */
function lookup(
  initial: MetadataLike | undefined,
  trailers: MetadataLike | undefined,
): (name: string) => string | undefined {
  const first = (m: MetadataLike | undefined, name: string) => {
    const values = m?.get(name)
    return values !== undefined && values.length > 0 ? String(values[0]) : undefined
  }
  return (name) => {
    const key = name === 'retry-after-ms' ? 'grpc-retry-pushback-ms' : name
    return first(trailers, key) ?? first(initial, key) ?? (key !== name ? first(trailers, name) : undefined)
  }
}
