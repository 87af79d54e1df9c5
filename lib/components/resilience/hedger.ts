import { AbortedError } from '../../foundation/errors/aborted-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { preciseNow } from '../../foundation/signals/clock'
import { LatencySamples } from './latency-samples'
import { RetryBudget } from './retry-budget'

export interface HedgerOptions {
  /** The share of recent latencies a call may take before a second attempt goes out (default 0.95: p95). */
  percentile?: number
  /**
   * The budget hedges spend from: a RetryBudget to share with retries (one budget for both), or the share of
   * requests that may be hedged (default 0.05). Each `run` is recorded as a request in it.
   */
  budget?: RetryBudget | number
  /** Calls measured before hedging starts, and the recent calls the percentile is taken over (default 20 and 1000). */
  minSamples?: number
  samples?: number
  /** The shortest hedging delay, ms (default 1): never hedge sooner than this. */
  minDelay?: number
}

export interface HedgerStats {
  /** Calls run. */
  calls: number
  /** Second attempts sent. */
  hedged: number
  /** Calls the second attempt answered first. */
  hedgeWon: number
  /** Hedges the budget refused (the call kept its first attempt only). */
  denied: number
  /** The current delay before a hedge, ms (Infinity until enough calls were measured). */
  delay: number
}

/**
 * Hedged requests (docs/guide/integrations.md, "Hedging"): when a call has taken longer than a percentile of its
 * upstream's recent calls, a second attempt goes out, within a budget shared with retries; the first to answer
 * wins and the other is aborted through its AbortSignal. For idempotent calls only: both may reach the upstream.
 */
export class Hedger {
  readonly percentile: number
  readonly budget: RetryBudget
  private readonly samples: LatencySamples
  private readonly minDelay: number
  private readonly ownsBudget: boolean
  private readonly counts = { calls: 0, hedged: 0, hedgeWon: 0, denied: 0 }

  constructor(options?: HedgerOptions) {
    const o = checkOptions<HedgerOptions>(options, 'options')
    this.percentile = optionalNumber('percentile', o.percentile, 0.95, { above: 0, max: 1 })
    this.minDelay = optionalNumber('minDelay', o.minDelay, 1, { min: 0, max: 86_400_000 })
    const size = optionalNumber('samples', o.samples, 1000, { integer: true, min: 10, max: 1_000_000 })
    const min = optionalNumber('minSamples', o.minSamples, 20, { integer: true, min: 1, max: size })
    this.samples = new LatencySamples(size, min)
    const b = o.budget
    this.ownsBudget = !(b instanceof RetryBudget)
    if (b instanceof RetryBudget) this.budget = b
    else if (b === undefined || (typeof b === 'number' && b >= 0 && b <= 1)) {
      this.budget = new RetryBudget({ ratio: b ?? 0.05, minPerSecond: 0 })
    } else throw new InvalidOptionError('budget', b, 'a RetryBudget, or a share of requests in [0, 1]')
  }

  /** The delay after which a call is hedged now, ms (Infinity while fewer than minSamples calls were measured). */
  delayMs(): number {
    const d = this.samples.quantile(this.percentile)
    return d < this.minDelay ? this.minDelay : d
  }

  /** Counts a call's latency (a guard that hedges itself reports here), ms. */
  record(ms: number): void {
    this.samples.add(ms)
  }

  /** @internal A guard hedging a call itself: may it send the second attempt (spends one of the budget)? */
  tryHedge(): boolean {
    if (!this.budget.tryAcquire()) {
      this.counts.denied++
      return false
    }
    this.counts.hedged++
    return true
  }

  /** @internal A guard's hedged call got its answer after `ms`; `byHedge` when the second attempt won. */
  answered(ms: number, byHedge: boolean): void {
    this.counts.calls++
    if (byHedge) this.counts.hedgeWon++
    this.samples.add(ms)
  }

  /**
   * Runs `attempt` and, if it has not settled within delayMs() and the budget allows, a second one; resolves or
   * rejects with whichever settles first, and aborts the other. `signal` aborts both.
   */
  run<T>(attempt: (signal: AbortSignal) => Promise<T>, options?: { signal?: AbortSignal }): Promise<T> {
    const outer = options?.signal
    if (outer?.aborted) return Promise.reject(new AbortedError(outer.reason))
    this.counts.calls++
    this.budget.recordRequest()
    return new Promise<T>((resolve, reject) => {
      const first = new AbortController()
      let second: AbortController | undefined
      let done = false
      let timer: ReturnType<typeof setTimeout> | undefined
      const finish = (won: AbortController, ok: boolean, value: unknown, started: number): void => {
        if (done) return
        done = true
        if (timer !== undefined) clearTimeout(timer)
        outer?.removeEventListener('abort', abortAll)
        this.samples.add(preciseNow() - started)
        if (won === second) this.counts.hedgeWon++
        ;(won === first ? second : first)?.abort(new AbortedError('hedged: the other attempt answered first'))
        if (ok) resolve(value as T)
        else reject(value)
      }
      const start = (controller: AbortController): void => {
        const started = preciseNow()
        let call: Promise<T>
        try {
          call = attempt(controller.signal)
        } catch (error) {
          call = Promise.reject(error)
        }
        call.then(
          (value) => finish(controller, true, value, started),
          (error: unknown) => {
            // A loser aborted by us says nothing; a failed first attempt waits for a hedge in flight.
            if (controller.signal.aborted && !outer?.aborted) return
            if (controller === first && second !== undefined && !done) return
            finish(controller, false, error, started)
          },
        )
      }
      const abortAll = (): void => {
        first.abort(outer?.reason)
        second?.abort(outer?.reason)
      }
      outer?.addEventListener('abort', abortAll, { once: true })
      start(first)
      const delay = this.delayMs()
      if (delay < Infinity) {
        timer = setTimeout(() => {
          timer = undefined
          if (done) return
          if (!this.budget.tryAcquire()) return void this.counts.denied++
          this.counts.hedged++
          second = new AbortController()
          start(second)
        }, delay)
      }
    })
  }

  stats(): HedgerStats {
    return { ...this.counts, delay: this.delayMs() }
  }

  /** Detaches its budget when it made it. Idempotent. */
  close(): void {
    if (this.ownsBudget) this.budget.close()
  }
}
