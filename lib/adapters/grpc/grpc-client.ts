import type { BreakerGroup } from '../../components/breakers/breaker-group'
import type { SreBreaker } from '../../components/breakers/sre-breaker'
import type { BulkheadPool } from '../../components/bulkhead/bulkhead-pool'
import { BulkheadRejectedError } from '../../foundation/errors/bulkhead-rejected-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOneOf, checkOptions } from '../../foundation/common/validate'
import type { Breaker } from '../../components/breakers/breaker'
import {
  type BreakerChoice,
  breakerOpenError,
  callStart,
  noRoomBreaker,
  report,
  resolveBreakers,
} from '../../guards/outbound/breaker-port'
import { type BulkheadChoice, noRoomBulkhead, resolveBulkheads } from '../../guards/outbound/bulkhead-port'
import { remainingDeadlineMs } from '../../guards/inbound/deadline-context'
import { GrpcStatus, grpcModule, type GrpcModule } from './grpc-module'
import { type QuotaChoice, resolveQuotas } from '../../guards/outbound/origin-quotas'
import { quotaCall } from './grpc-quota'

/**
 * Options of grpcClientGuard; `bulkheads` holds one adaptive bulkhead per target (the `target` option names it;
 * without it, the interceptor's calls share one: install one interceptor per client).
 */
export interface GrpcClientGuardOptions<B extends Breaker = SreBreaker> extends BreakerChoice<B>, BulkheadChoice {
  /** One breaker per method (`/pkg.Service/Method`, default) or one for the whole target. */
  per?: 'method' | 'target'
  /** The target's name (its address, say): the bulkhead's key, and the breaker's with `per: 'target'` (required). */
  target?: string
  /** Status codes that count as a failure of the server (default: UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE, DATA_LOSS). */
  failureCodes?: readonly number[]
  /** The `@grpc/grpc-js` module (default: loaded on first use, as the application resolves it). */
  grpc?: unknown
  /**
   * The target's quota (by the `target` name): a call waits for it before it is made, and RESOURCE_EXHAUSTED with
   * `retry-after` or `grpc-retry-pushback-ms` pauses it (docs/guide/integrations.md, "Quotas per origin").
   */
  quotas?: QuotaChoice<{ path: string }>
}

export type GrpcClientInterceptor<B extends Breaker = SreBreaker> = ((
  options: any,
  nextCall: (options: any) => any,
) => any) & {
  /** The breakers, by method path or target name. */
  readonly breakers: BreakerGroup<B>
  /** The adaptive bulkheads, by target (undefined with `bulkheads: false`). */
  readonly bulkheads: BulkheadPool | undefined
  /** Closes the breakers and the bulkheads if the interceptor made them. */
  close(): void
}

const DEFAULT_FAILURES = [
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
]

// 0 success, 1 failure, 2 not counted (the caller's own cancellation says nothing about the server).
function outcomeTable(failures: readonly number[]): Uint8Array {
  const table = new Uint8Array(32)
  for (const code of failures) table[code] = 1
  table[GrpcStatus.CANCELLED] = 2
  return table
}

function resolveFailures(value: unknown): readonly number[] {
  if (value === undefined) return DEFAULT_FAILURES
  if (!Array.isArray(value) || value.some((c) => !Number.isInteger(c) || c < 0 || c > 16)) {
    throw new InvalidOptionError('failureCodes', value, 'an array of gRPC status codes (integers 0..16)')
  }
  return value
}

/**
 * A grpc-js client interceptor (`new Client(address, credentials, { interceptors: [grpcClientGuard()] })`) that
 * puts a breaker in front of each method (or the whole target) and an adaptive bulkhead in front of the target: a
 * call the breaker refuses, or the bulkhead (the target is saturated), ends at once with UNAVAILABLE without
 * touching the network; an allowed call's status is reported to the breaker, its time to the bulkhead.
 */
export function grpcClientGuard<B extends Breaker = SreBreaker>(
  options?: GrpcClientGuardOptions<B>,
): GrpcClientInterceptor<B> {
  const o = checkOptions<GrpcClientGuardOptions<B>>(options, 'options')
  const per = checkOneOf('per', o.per ?? 'method', ['method', 'target'] as const)
  if (per === 'target' && (typeof o.target !== 'string' || o.target === '')) {
    throw new InvalidOptionError('target', o.target, "the target's name (required with per: 'target')")
  }
  const outcomes = outcomeTable(resolveFailures(o.failureCodes))
  const grpc = grpcModule(o.grpc)
  const { group, owns } = resolveBreakers(o, 'grpc')
  const bulkheads = resolveBulkheads(o.bulkheads)
  const target = o.target as string
  const upstream = target ?? 'the target'
  const quotas = resolveQuotas<{ path: string }>(o.quotas)

  const guarded = (callOptions: { method_definition: { path: string } }, nextCall: (options: unknown) => any): any => {
    const remaining = remainingDeadlineMs()
    if (remaining !== undefined && remaining <= 0) {
      // The inbound caller has given up: the call never goes out.
      return new grpc.InterceptingCall(deadlineCall(grpc, callOptions.method_definition.path))
    }
    const key = per === 'method' ? callOptions.method_definition.path : target
    const breaker = group.get(key) ?? noRoomBreaker
    if (!breaker.tryAcquire()) return new grpc.InterceptingCall(rejectedCall(grpc, key, breakerOpenError(breaker, key)))
    const bulkhead = bulkheads.pool === undefined ? undefined : (bulkheads.pool.get(upstream) ?? noRoomBulkhead)
    const slot = bulkhead === undefined ? -1 : bulkhead.tryAcquire()
    if (slot < 0 && bulkhead !== undefined) {
      return new grpc.InterceptingCall(rejectedCall(grpc, key, new BulkheadRejectedError(upstream)))
    }
    const start = callStart(breaker)
    return new grpc.InterceptingCall(nextCall(withInboundDeadline(callOptions)), {
      start(metadata: unknown, _listener: unknown, next: (metadata: unknown, listener: object) => void) {
        next(metadata, {
          onReceiveStatus(status: { code: number }, forward: (status: unknown) => void) {
            const outcome = outcomes[status.code] ?? 0
            if (outcome !== 2) report(breaker, outcome === 0, start)
            // A deadline is a response time too (the longest); a failure or a cancellation says nothing of it.
            bulkhead?.release(slot, outcome === 0 || status.code === GrpcStatus.DEADLINE_EXCEEDED)
            forward(status)
          },
        })
      },
    })
  }
  const interceptor = (
    callOptions: { method_definition: { path: string } },
    nextCall: (options: unknown) => any,
  ): any => {
    const quota = quotas?.(upstream)
    if (quota === undefined) return guarded(callOptions, nextCall)
    const request = { path: callOptions.method_definition.path }
    const call = quotaCall(
      quota,
      request,
      () => guarded(callOptions, nextCall),
      () => new grpc.Metadata(),
    )
    return new grpc.InterceptingCall(call as never)
  }
  return Object.assign(interceptor, {
    breakers: group,
    bulkheads: bulkheads.pool,
    close: () => {
      if (owns) group.close()
      if (bulkheads.owns) bulkheads.pool?.close()
    },
  })
}

/**
 * The call's options with the inbound request's deadline when the caller runs inside one (a guard's
 * `deadline: { propagate: true }`) and it is sooner than the call's own: grpc-js sends it on as grpc-timeout.
 */
function withInboundDeadline<T extends object>(callOptions: T & { deadline?: unknown }): T {
  const remaining = remainingDeadlineMs()
  if (remaining === undefined) return callOptions
  const inbound = Date.now() + remaining
  const own =
    callOptions.deadline instanceof Date ? callOptions.deadline.getTime() : Number(callOptions.deadline ?? Infinity)
  return own <= inbound ? callOptions : { ...callOptions, deadline: inbound }
}

/** A call whose inbound caller's deadline has passed: it ends with DEADLINE_EXCEEDED as soon as it starts. */
function deadlineCall(grpc: GrpcModule, path: string): object {
  return endedCall(grpc, path, GrpcStatus.DEADLINE_EXCEEDED, "the inbound request's deadline has passed (not sent)")
}

/** A call that never reaches the network: it ends with UNAVAILABLE, saying why, as soon as it starts. */
function rejectedCall(grpc: GrpcModule, key: string, refusal: Error): object {
  return endedCall(grpc, key, GrpcStatus.UNAVAILABLE, refusal.message + ' (rejected locally)')
}

function endedCall(grpc: GrpcModule, key: string, code: number, details: string): object {
  const noop = (): void => undefined
  return {
    start(_metadata: unknown, listener: { onReceiveStatus(status: object): void }) {
      const status = { code, details, metadata: new grpc.Metadata() }
      process.nextTick(() => listener.onReceiveStatus(status)) // as a real call would: never inside start()
    },
    cancelWithStatus: noop,
    getPeer: () => key,
    sendMessageWithContext: noop,
    sendMessage: noop,
    startRead: noop,
    halfClose: noop,
    getAuthContext: () => null,
  }
}
