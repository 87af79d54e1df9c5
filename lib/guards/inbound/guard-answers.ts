import { type ResolvedDegrade, timeoutFor } from './degrade-options'
import { checkFallbackResponse, type DegradedAnswer, type Fallback, type FallbackReason } from './fallback'
import { FALLBACK_FAILED } from './inbound-guard-types'

/**
 * The inbound guard's degraded answers (docs/guide/degrade.md): the fallback's answer for a refused, failed or
 * slow request, the per-request timeout, and the counts of both. Off the admission path: only a request that is
 * not answered normally reaches it.
 */
export class GuardAnswers<Req> {
  /** The fallback (undefined without one). */
  readonly fallback: Fallback<Req> | undefined
  /** Whether the guard answers in place of a slow handler (a `timeout` is set). */
  readonly timesOut: boolean
  timedOut = 0
  fallbacks = 0
  fallbackErrors = 0
  clientGone = 0
  private readonly timeout: ResolvedDegrade<Req>['timeout']
  private readonly checkAnswer: (value: unknown) => unknown

  constructor(degrade: ResolvedDegrade<Req>, checkAnswer: ((value: unknown) => unknown) | undefined) {
    this.fallback = degrade.fallback
    this.timeout = degrade.timeout
    this.timesOut = degrade.timeout !== 0
    this.checkAnswer = checkAnswer ?? checkFallbackResponse
  }

  /**
   * The fallback's answer for `request`: undefined when there is no fallback or it chose the plain answer,
   * FALLBACK_FAILED (null) when it threw or returned something that is not an answer. Never throws.
   */
  answer(request: Req, reason: FallbackReason): DegradedAnswer | undefined | null {
    const fallback = this.fallback
    if (fallback === undefined) return undefined
    try {
      const answer = this.checkAnswer(fallback(request, reason)) as DegradedAnswer | undefined
      if (answer !== undefined) this.fallbacks++
      return answer
    } catch {
      this.fallbackErrors++
      return FALLBACK_FAILED
    }
  }

  /** An answer `answer` gave that Node refused to write: a failed fallback after all (answered plainly). */
  unwritable(): void {
    this.fallbacks--
    this.fallbackErrors++
  }

  /** Milliseconds `request`'s handler has to answer (0: no timeout). */
  timeoutOf(request: Req): number {
    return timeoutFor(this.timeout, request)
  }
}
