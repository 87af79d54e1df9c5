import type { Observable, Subscriber } from 'rxjs'

import { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'
import { runWithDeadline } from '../../guards/inbound/deadline-context'
import { responseGone } from '../../guards/inbound/degraded-response'
import { type DegradedAnswer, errorReason, type FallbackReason } from '../../guards/inbound/fallback'
import type { InboundGuard } from '../../guards/inbound/inbound-guard'
import { attachSignal } from '../../guards/inbound/request-signal'
import { rawResponse, type NestRequest, type NestResponse } from './nest-platform'

/** Nest's CallHandler: `handle()` runs the route's handler when its observable is subscribed. */
export interface CallHandlerLike {
  handle(): Observable<unknown>
}

type Rx = { Observable: new (subscribe: (subscriber: Subscriber<unknown>) => () => void) => Observable<unknown> }
let rx: Rx | undefined

/** RxJS as the application resolves it (a peer of NestJS), loaded when the first guard is made. */
export function loadRx(): void {
  if (rx !== undefined) return
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    rx = require('rxjs') as Rx
  } catch (error) {
    throw new MissingPeerDependencyError('rxjs', 'the NestJS guard', error)
  }
}

/** One admitted request, as the interceptor sees it. */
export interface InterceptedCall {
  request: NestRequest
  response: NestResponse
  /** Its deadline (Date.now() ms; NaN: none). */
  deadline: number
  next: CallHandlerLike
}

/** How the guard answers in the handler's place, and which errors are the handler's to answer. */
export interface DegradedAnswers {
  degraded(
    response: NestResponse,
    reason: FallbackReason,
    answer: DegradedAnswer | null | undefined,
    cause?: unknown,
  ): unknown
  /** An error the fallback never answers (a client error the handler threw on purpose). */
  passesThrough(error: unknown): boolean
}

/**
 * The handler's observable with what the guard's options add (docs/guide/degrade.md): the `timeout` (the guard then
 * answers in its place, aborts `request.signal` and drops what the handler emits later), the fallback for its
 * errors, and the deadline's async context. Without any of them, the handler's own observable.
 */
export function interceptWith(
  guard: InboundGuard<NestRequest>,
  call: InterceptedCall,
  answers: DegradedAnswers,
): Observable<unknown> {
  const ms = guard.timesOut ? guard.timeoutOf(call.request) : 0
  const inContext = guard.propagatesDeadline && call.deadline === call.deadline
  if (ms === 0 && !inContext && guard.fallback === undefined) return call.next.handle()
  const signal = ms > 0 ? attachSignal(call.request as object) : undefined
  // The handler runs in the async context handle() is called in (Nest scopes it there): the deadline's, with one.
  const source = inContext ? runWithDeadline(call.deadline, () => call.next.handle()) : call.next.handle()

  const failed = (error: unknown): unknown => {
    if (guard.fallback === undefined || answers.passesThrough(error)) return error
    const reason = errorReason(error)
    const answer = guard.answer(call.request, reason)
    return answer === undefined ? error : answers.degraded(call.response, reason, answer, error)
  }

  return new (rx as Rx).Observable((observer) => {
    const raw = rawResponse(call.response)
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const settle = (): boolean => {
      if (settled) return false
      settled = true
      clearTimeout(timer)
      return true
    }
    const subscription = source.subscribe({
      next: (value) => {
        if (!settled) observer.next(value)
      },
      error: (error) => {
        if (settle()) observer.error(failed(error))
      },
      complete: () => {
        if (settle()) observer.complete()
      },
    })
    if (signal !== undefined) {
      timer = setTimeout(() => {
        if (settled || raw.headersSent || raw.writableEnded || responseGone(raw)) return
        settle()
        subscription.unsubscribe()
        guard.countTimeout()
        const refusal = answers.degraded(call.response, 'timeout', guard.answer(call.request, 'timeout'))
        signal.timedOut(ms)
        observer.error(refusal)
      }, ms)
      raw.once('close', () => {
        clearTimeout(timer)
        if (!raw.writableEnded) signal.clientGone()
      })
    }
    return () => {
      settle()
      subscription.unsubscribe()
    }
  })
}
