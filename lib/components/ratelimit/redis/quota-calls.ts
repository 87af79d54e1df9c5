import { RedisError } from '../../../foundation/errors/redis-error'
import type { Clock } from '../../../foundation/signals/clock'
import type { UpstreamLimits } from '../quota-permits'
import type { AsyncTake, PermitSource } from '../waiting/permit-source'
import { Reservation } from '../waiting/reservation'
import { clientFailure } from './client-failure'
import type { RedisPort } from './clients/redis-port'
import { QUOTA_SCRIPT } from './quota-script'
import { scriptSha } from './redis-scripts'
import { runScript } from './run-script'

const SHA = scriptSha(QUOTA_SCRIPT)
/** After a failed or timed-out call, the head asks again this much later, ms. */
const RETRY_MS = 100

interface QuotaLimits {
  window: number
  requests: number | undefined
  cost: number | undefined
}

/**
 * RedisQuota's calls to its script (quota-script.ts), and the asynchronous PermitSource its queue asks: the queue's
 * permit count is the cost plus one, as for Quota.
 */
export class QuotaCalls implements PermitSource {
  sent = 0
  failures = 0
  private readonly params: string[]

  constructor(
    private readonly port: RedisPort,
    private readonly keys: string[],
    private readonly limits: QuotaLimits,
    private readonly timeout: number,
    /** The longest a refused head waits before asking again: give-backs elsewhere in the fleet show then. */
    private readonly pollInterval: number,
    private readonly now: Clock | undefined,
    private readonly onError: (error: RedisError) => void,
    private readonly given: () => void,
  ) {
    const param = (limit: number | undefined) =>
      limit === undefined ? ['', ''] : [String(limits.window / limit), String(limit)]
    this.params = [...param(limits.requests), ...param(limits.cost)]
  }

  tryAcquire(): boolean {
    return false // decided by Redis: see take
  }

  retryAfterMs(): number {
    return 0
  }

  maxPermits(): number {
    return this.limits.cost === undefined ? Infinity : this.limits.cost + 1
  }

  reservation(n: number): Reservation {
    return new Reservation(this, n - 1)
  }

  givebacks(): undefined {
    return undefined
  }

  take(n: number): Promise<AsyncTake> {
    return this.call('take', this.limits.requests === undefined ? '' : '1', String(n - 1), '').then(
      (reply) => {
        const [granted, waitUs] = reply as [number, number]
        return granted === 1
          ? { reservation: this.reservation(n), waitMs: 0 }
          : { reservation: undefined, waitMs: Math.min(waitUs / 1000, this.pollInterval) }
      },
      () => ({ reservation: undefined, waitMs: RETRY_MS }),
    )
  }

  /** A reservation settled: the cost moves, a cancel gives the request back too (one call, not awaited). */
  adjust(delta: number, _mark: number, cancelled?: boolean): void {
    const request = cancelled && this.limits.requests !== undefined ? '-1' : ''
    const call = this.call('adjust', request, delta === 0 ? '' : String(delta), '')
    // Once Redis has them back, this process's waiters ask again.
    call.then(
      () => (delta < 0 || cancelled) && this.given(),
      () => undefined,
    )
  }

  floor(limits: UpstreamLimits): void {
    const amount = (v: number | undefined) => (v === undefined || !(v >= 0) ? '' : String(v))
    const pause = limits.pauseMs !== undefined && limits.pauseMs > 0 ? String(limits.pauseMs) : ''
    this.call('floor', amount(limits.requests), amount(limits.cost), pause).catch(() => undefined)
  }

  private call(op: string, requests: string, cost: string, pause: string): Promise<unknown> {
    const time = this.now === undefined ? '' : String(this.now())
    const args = [time, op, ...this.params, requests, cost, pause]
    this.sent++
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new RedisError(`the quota's Redis call took over ${this.timeout} ms`)),
        this.timeout,
      )
    })
    const reply = runScript(this.port, QUOTA_SCRIPT, SHA, this.keys, args).then((r) => {
      if (!Array.isArray(r) || r.length !== 2)
        throw new RedisError(`unexpected reply from the quota script: ${String(r)}`)
      return r
    })
    return Promise.race([reply, timedOut]).then(
      (r) => {
        clearTimeout(timer)
        return r
      },
      (error: unknown) => {
        clearTimeout(timer)
        this.failures++
        this.onError(error instanceof RedisError ? error : clientFailure('the quota call failed', error))
        throw error
      },
    )
  }
}
