import { checkOptions } from '../../foundation/common/validate'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { Shed } from '../../foundation/errors/shed'
import { runWithDeadline } from '../../guards/inbound/deadline-context'
import type { FallbackReason } from '../../guards/inbound/fallback'
import type { Waiter } from '../../admission/queue/admission-queue'
import { CALLBACK_FAILED, InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { GrpcStatus, grpcModule } from './grpc-module'
import {
  CALLBACK_FAILED_STATUS,
  checkGrpcAnswer,
  type GrpcCallInfo,
  type GrpcFallback,
  type GrpcStatusAnswer,
  plainGrpcAnswer,
} from './grpc-fallback'
import { RequestSignal, runWithSignal } from '../../guards/inbound/request-signal'
import { sendAhead, sessionOf } from './call-transport'

export type { GrpcCallInfo }

export interface GrpcServerGuardOptions extends Omit<InboundGuardOptions<GrpcCallInfo>, 'fallback' | 'deadline'> {
  /** The `@grpc/grpc-js` module (default: loaded on first use, as the application resolves it). */
  grpc?: unknown
  /** Ends refused, timed-out and failed calls with its status and trailers in place of the plain ones. */
  fallback?: GrpcFallback
  /**
   * Calls whose deadline (`grpc-timeout`) is shorter than the expected service time are refused at once (default
   * on; false: off); `propagate: true` runs the handler in the deadline's async context for grpcClientGuard.
   */
  deadline?: false | { propagate?: boolean }
}

/** What grpc-js tells an interceptor of the method: its path, and whether it answers with a stream. */
type MethodInfo = { path: string; responseStream?: boolean }

/** A grpc-js server interceptor (`interceptors: [guard]`), with the guard it runs. */
export type GrpcServerInterceptor = ((method: { path: string; responseStream?: boolean }, call: any) => any) & {
  readonly guard: InboundGuard<GrpcCallInfo>
}

const grpcAccess: RequestAccess<GrpcCallInfo> = {
  header: (info, name) => info.metadata.get(name)[0],
  address: (info) => info.address,
  remaining: (info) => info.remainingMs,
  checkAnswer: checkGrpcAnswer,
  // Routes are method paths (`/pkg.Service/Method`, `/pkg.Service/*`); every call is a POST.
  method: () => 'POST',
  url: (info) => info.method,
}

const RELEASED = -1
const SERVER_FAILURES = new Set<number>([
  GrpcStatus.UNKNOWN,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
])
// A handler's own failure, which the fallback may answer in its place.
const HANDLER_ERRORS = new Set<number>([GrpcStatus.UNKNOWN, GrpcStatus.INTERNAL, GrpcStatus.DATA_LOSS])

// What the responder does with the handler's sends: pass them, let the guard's own answer through, or drop them.
const PASS = 0
const ANSWERING = 1
const ANSWERED = 2

/**
 * A grpc-js server interceptor (`new grpc.Server({ interceptors: [grpcServerGuard()] })`): each call is admitted
 * or ended at once with RESOURCE_EXHAUSTED before its handler runs; a call whose deadline is shorter than the
 * expected service time is refused at once too. The priority class comes from `priority(info)`; a metadata key
 * (`priorityHeader`) is read only as the options allow (`trustPriority`, docs/guide/trust.md). An admitted call's
 * token is released when its handler has answered (a unary answer: its message or its error; a stream: its
 * `call.end()` or error), however long the client takes to read it, or when the call ends first (a deadline, a
 * cancellation by the client); one connection holds at most `connectionConcurrency` calls. Put it first in
 * `interceptors`: directly above grpc-js, a streaming handler's end comes through while the client has not read
 * (docs/guide/trust.md). With `fallback`, refusals, a `timeout` and the handler's failures (UNKNOWN,
 * INTERNAL, DATA_LOSS) end with the fallback's status and trailers (docs/guide/degrade.md).
 */
export function grpcServerGuard(options?: GrpcServerGuardOptions): GrpcServerInterceptor {
  const { grpc: given, ...rest } = checkOptions<GrpcServerGuardOptions>(options, 'options')
  const path = (rest.readiness as { path?: unknown } | undefined)?.path
  if (path !== undefined)
    throw new InvalidOptionError('readiness.path', path, 'left out: answer health checks with guard.readiness.ready()')
  const grpc = grpcModule(given)
  const guard = new InboundGuard<GrpcCallInfo>(rest as InboundGuardOptions<GrpcCallInfo>, grpcAccess)
  const toStatus = (answer: GrpcStatusAnswer) => {
    const trailers = new grpc.Metadata()
    for (const [name, value] of Object.entries(answer.trailers)) trailers.set(name, value)
    return { code: answer.code, details: answer.details, metadata: trailers }
  }
  /** The fallback's status, else (one grpc-js refused, counted: checked first, but never thrown) the plain one. */
  const statusOf = (answer: GrpcStatusAnswer, plain: () => object): object => {
    try {
      return toStatus(answer)
    } catch {
      guard.fallbackWritten(false)
      return plain()
    }
  }
  const answerFor = (info: GrpcCallInfo, reason: FallbackReason): GrpcStatusAnswer => {
    const answer = guard.answer(info, reason) as unknown as GrpcStatusAnswer | undefined | null
    return answer ?? plainGrpcAnswer(reason, answer === null)
  }
  const connections = guard.connections
  const interceptor = (method: MethodInfo, call: any): any => {
    const session = sessionOf(call)
    let token = RELEASED
    let holdsPlace = false
    let phase = PASS
    let info: GrpcCallInfo | undefined
    let timer: ReturnType<typeof setTimeout> | undefined
    let deadline = NaN
    let timeoutMs = 0
    let waiter: Waiter | undefined
    let signal: RequestSignal | undefined // callSignal() for the handler, with a timeout
    const release = (measured: boolean): void => {
      if (timer !== undefined) clearTimeout(timer)
      if (token === RELEASED) return
      const t = token
      token = RELEASED
      guard.release(t, measured)
    }
    const cancelled = (): void => {
      // A call cancelled while it waits in the queue frees its place.
      if (waiter?.cancel() === true) guard.countClientGone()
      if (token !== RELEASED) signal?.clientGone() // grpc-js reports ended calls here too: only one still running
      release(false)
      if (holdsPlace) {
        holdsPlace = false
        connections?.giveBack(session as object) // the call is over: its status sent, or its stream closed
      }
    }
    const answerInstead = (answer: GrpcStatusAnswer, reason: FallbackReason): void => {
      phase = ANSWERING
      release(false) // answered in the handler's place: its time is not the service's
      intercepting.sendStatus(statusOf(answer, () => toStatus(plainGrpcAnswer(reason, true))))
      phase = ANSWERED
    }
    const timedOut = (): void => {
      timer = undefined
      if (phase !== PASS || token === RELEASED) return
      guard.countTimeout()
      answerInstead(answerFor(info as GrpcCallInfo, 'timeout'), 'timeout')
      signal?.timedOut(timeoutMs)
    }
    const inContext = (next: (...args: any[]) => void, ...args: unknown[]): void => {
      if (signal !== undefined) runWithSignal(signal, inDeadline, next, ...args)
      else inDeadline(next, ...args)
    }
    const inDeadline = (next: (...args: any[]) => void, ...args: unknown[]): void => {
      if (deadline === deadline) runWithDeadline(deadline, next, ...args)
      else next(...args)
    }
    const intercepting = new grpc.ServerInterceptingCall(call, {
      start(next: (listener: object) => void) {
        next({
          onReceiveMetadata(metadata: GrpcCallInfo['metadata'], forward: (metadata: unknown) => void) {
            const address = call.getConnectionInfo?.().remoteAddress
            const due = Number(call.getDeadline?.())
            info = { method: method.path, metadata, address, remainingMs: due < Infinity ? due - Date.now() : NaN }
            const t = guard.tryAcquire(info, session)
            if (t !== QUEUED) return decided(t, info, metadata, forward)
            const queued = info
            waiter = guard.waitForSlot((token) => {
              waiter = undefined
              decided(token, queued, metadata, forward)
            })
          },
          // A unary handler starts when the request is complete: in the deadline's context too.
          onReceiveHalfClose:
            guard.propagatesDeadline || guard.timesOut ? (next: () => void) => inContext(next) : undefined,
          // grpc-js reports every ended call here (after its status too), so this also covers deadlines, whose
          // status does not pass through interceptors.
          onCancel: cancelled,
        })
      },
      sendMetadata(metadata: unknown, next: (metadata: unknown) => void) {
        if (phase !== ANSWERED) next(metadata)
      },
      sendMessage(message: unknown, next: (message: unknown) => void) {
        if (phase === ANSWERED) return
        if (method.responseStream !== true) release(true) // a unary answer: the handler is done
        next(message)
      },
      sendStatus(status: { code?: number }, next: (status: unknown) => void) {
        if (phase === ANSWERED) return // the handler's late status: the call ended already
        if (phase === PASS && guard.fallback !== undefined && HANDLER_ERRORS.has(status?.code as number)) {
          const answer = guard.answer(info as GrpcCallInfo, 'error') as unknown as GrpcStatusAnswer | null | undefined
          if (answer !== undefined) return answerInstead(answer ?? plainGrpcAnswer('error', true), 'error')
        }
        // A failure says nothing about how long calls take (a deadline, on the other hand, is the longest time).
        release(status?.code === undefined || !SERVER_FAILURES.has(status.code))
        next(status)
      },
    })
    /** The guard's answer for the call: admitted (its metadata goes on to the handler) or refused. */
    function decided(t: number, info: GrpcCallInfo, metadata: unknown, forward: (metadata: unknown) => void): void {
      if (t < 0) {
        // The handler never sees the metadata, so it never starts.
        if (t === CALLBACK_FAILED) return intercepting.sendStatus(toStatus(CALLBACK_FAILED_STATUS))
        const answer = guard.fallback === undefined ? undefined : guard.answer(info, guard.reasonOf(t))
        const shed = () => shedStatus(grpc, t, guard)
        return intercepting.sendStatus(answer ? statusOf(answer as unknown as GrpcStatusAnswer, shed) : shed())
      }
      token = t
      if (connections !== undefined && session !== undefined) {
        connections.take(session)
        holdsPlace = true
      }
      const ms = guard.timesOut ? guard.timeoutOf(info) : 0
      if (ms > 0) {
        timeoutMs = ms
        signal = new RequestSignal()
        timer = setTimeout(timedOut, ms)
      }
      if (guard.propagatesDeadline) deadline = guard.deadlineAt
      if (signal === undefined && !guard.propagatesDeadline) return forward(metadata)
      inContext(forward, metadata)
    }
    // Directly above grpc-js's own call: a streaming handler's messages may wait for the client without it.
    if (method.responseStream === true && !(call instanceof grpc.ServerInterceptingCall)) sendAhead(intercepting)
    return intercepting
  }
  return Object.assign(interceptor, { guard })
}

function shedStatus(grpc: ReturnType<typeof grpcModule>, code: number, guard: InboundGuard<GrpcCallInfo>): object {
  const trailers = new grpc.Metadata()
  if (code === Shed.denied) return { code: GrpcStatus.PERMISSION_DENIED, details: 'denied', metadata: trailers }
  trailers.set('grpc-retry-pushback-ms', String(guard.retryAfter * 1000)) // honoured by grpc retry policies
  return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: shedDetails(code, guard.retryAfter), metadata: trailers }
}

function shedDetails(code: number, retryAfter: number): string {
  if (code === Shed.rateLimit) return `rate limited, retry after ${retryAfter} s`
  if (code === Shed.keyConcurrency) return `too many concurrent calls, retry after ${retryAfter} s`
  if (code === Shed.banned) return `banned, retry after ${retryAfter} s`
  if (code === Shed.connectionConcurrency)
    return `too many concurrent calls on one connection, retry after ${retryAfter} s`
  if (code === Shed.deadline) return 'deadline shorter than the expected service time'
  if (code === Shed.queueTimeout) return `overloaded, no slot within maxWait, retry after ${retryAfter} s`
  return `overloaded, retry after ${retryAfter} s`
}
