import { checkOptions } from '../validate'
import { Shed } from '../shed/shed'
import { InboundGuard, type RequestAccess } from './inbound-guard'
import type { InboundGuardOptions } from './inbound-options'
import { GrpcStatus, grpcModule } from './grpc-module'

/** What the guard sees of an incoming call (and what `priority` and `rateLimit.key` receive). */
export interface GrpcCallInfo {
  /** The method's path, `/package.Service/Method`. */
  method: string
  /** The call's request metadata (grpc-js `Metadata`). */
  metadata: { get(key: string): unknown[] }
  /** The client's address, without the port. */
  address: string | undefined
}

export interface GrpcServerGuardOptions extends InboundGuardOptions<GrpcCallInfo> {
  /** The `@grpc/grpc-js` module (default: loaded on first use, as the application resolves it). */
  grpc?: unknown
}

export type GrpcServerInterceptor = ((method: { path: string }, call: any) => any) & {
  readonly guard: InboundGuard<GrpcCallInfo>
}

const grpcAccess: RequestAccess<GrpcCallInfo> = {
  header: (info, name) => info.metadata.get(name)[0],
  address: (info) => info.address,
}

const RELEASED = -1
const SERVER_FAILURES = new Set<number>([
  GrpcStatus.UNKNOWN,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
])

/**
 * A grpc-js server interceptor (`new grpc.Server({ interceptors: [grpcServerGuard()] })`): each call is admitted
 * or ended at once with RESOURCE_EXHAUSTED before its handler runs. The priority class is read from the
 * `x-priority` metadata. An admitted call's token is released when the call ends, however it ends: a status
 * sent by the handler, a deadline, or a cancellation by the client.
 */
export function grpcServerGuard(options?: GrpcServerGuardOptions): GrpcServerInterceptor {
  const { grpc: given, ...rest } = checkOptions<GrpcServerGuardOptions>(options, 'options')
  const grpc = grpcModule(given)
  const guard = new InboundGuard<GrpcCallInfo>(rest, grpcAccess)
  const interceptor = (method: { path: string }, call: any): any => {
    let token = RELEASED
    const release = (measured: boolean): void => {
      if (token === RELEASED) return
      const t = token
      token = RELEASED
      guard.release(t, measured)
    }
    const cancelled = (): void => release(false)
    const intercepting = new grpc.ServerInterceptingCall(call, {
      start(next: (listener: object) => void) {
        next({
          onReceiveMetadata(metadata: GrpcCallInfo['metadata'], forward: (metadata: unknown) => void) {
            const address = call.getConnectionInfo?.().remoteAddress
            const t = guard.tryAcquire({ method: method.path, metadata, address })
            if (t < 0) {
              // The handler never sees the metadata, so it never starts.
              const trailers = new grpc.Metadata()
              trailers.set('grpc-retry-pushback-ms', String(guard.retryAfter * 1000)) // honoured by grpc retry policies
              intercepting.sendStatus({
                code: GrpcStatus.RESOURCE_EXHAUSTED,
                details: shedDetails(t, guard.retryAfter),
                metadata: trailers,
              })
              return
            }
            token = t
            forward(metadata)
          },
          // grpc-js reports every ended call here (after its status too), so this also covers deadlines, whose
          // status does not pass through interceptors.
          onCancel: cancelled,
        })
      },
      sendStatus(status: { code?: number }, next: (status: unknown) => void) {
        // A failure says nothing about how long calls take (a deadline, on the other hand, is the longest time).
        release(status?.code === undefined || !SERVER_FAILURES.has(status.code))
        next(status)
      },
    })
    return intercepting
  }
  return Object.assign(interceptor, { guard })
}

function shedDetails(reason: number, retryAfter: number): string {
  return reason === Shed.rateLimit
    ? `rate limited, retry after ${retryAfter} s`
    : `overloaded, retry after ${retryAfter} s`
}
