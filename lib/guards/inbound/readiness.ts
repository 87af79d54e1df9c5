import type { IncomingMessage, ServerResponse } from 'http'

import { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import { type Clock, coarseNow } from '../../foundation/signals/clock'
import { JSON_TYPE } from './shed-reply'

export interface ReadinessOptions {
  /** The limiter whose shedding it watches (default in a guard: the guard's limiter). */
  limiter?: BbrLimiter
  /** A sample counts as shedding when at least this share of the limiter's decisions were sheds (default 0.1). */
  shedRatio?: number
  /** Milliseconds of shedding samples in a row before the host says it is not ready (default 5000). */
  notReadyAfter?: number
  /** Milliseconds of calm samples in a row before it says it is ready again (default 10 000). */
  readyAfter?: number
  /** Milliseconds between samples (default 1000). */
  interval?: number
  /** Monotonic clock in ms (default: the coarse clock). */
  now?: Clock
}

/** What `status()` reports. */
export interface ReadinessStatus {
  ready: boolean
  /** Whether the last sample was shedding. */
  shedding: boolean
  /** Milliseconds the host has been in its present state. */
  for: number
  /** The share of the limiter's decisions shed in the last sample. */
  shedRatio: number
}

const READY_BODY = JSON.stringify({ ready: true })
const NOT_READY_BODY = JSON.stringify({ ready: false, reason: 'shedding' })

/**
 * Whether this host sheds now, for a load balancer's or Kubernetes' readiness probe (docs/guide/gateway.md,
 * "Readiness"): it samples the limiter's decisions every `interval` and turns not ready after `notReadyAfter` of
 * samples in a row that shed at least `shedRatio` of them, ready again after `readyAfter` of samples in a row that did
 * not. So one busy second never takes a pod out of rotation, and one calm second never puts a drowning one back.
 * `ready()` is the function; `handler` answers a request (200 `{"ready":true}` or 503 `{"ready":false}`).
 */
export class Readiness {
  declare readonly limiter: BbrLimiter
  declare readonly shedRatio: number
  declare readonly notReadyAfter: number
  declare readonly readyAfter: number
  declare readonly interval: number
  declare private readonly now: Clock
  declare private timer: ReturnType<typeof setInterval> | undefined
  private state = true
  private since: number
  private lastAt: number
  private lastAdmitted: number
  private lastShed: number
  private lastRatio = 0
  /** Start of the present run of shedding (or calm) samples; NaN outside one. */
  private busySince = NaN
  private calmSince = NaN

  constructor(options: ReadinessOptions & { limiter: BbrLimiter | undefined }) {
    const o = checkOptions<ReadinessOptions>(options, 'readiness')
    if (!(o.limiter instanceof BbrLimiter))
      throw new InvalidOptionError(
        'readiness.limiter',
        o.limiter,
        'a BbrLimiter (a guard with limiter: false has none)',
      )
    this.limiter = o.limiter
    this.shedRatio = optionalNumber('readiness.shedRatio', o.shedRatio, 0.1, { above: 0, max: 1 })
    this.notReadyAfter = optionalNumber('readiness.notReadyAfter', o.notReadyAfter, 5000, { min: 0 })
    this.readyAfter = optionalNumber('readiness.readyAfter', o.readyAfter, 10_000, { min: 0 })
    this.interval = optionalNumber('readiness.interval', o.interval, 1000, { min: 10, max: 60_000 })
    this.now = optionalFunction<Clock>('readiness.now', o.now) ?? coarseNow
    const s = this.limiter.stats()
    this.lastAdmitted = s.admitted
    this.lastShed = s.shed
    this.since = this.lastAt = this.now()
    // Samples between probes, so that a probe every 10 s still sees each second (unref: it never holds the process).
    this.timer = setInterval(() => this.sample(), this.interval)
    this.timer.unref?.()
  }

  /** Whether the host is ready: takes a sample first when one is due. */
  ready(): boolean {
    this.sample()
    return this.state
  }

  status(): ReadinessStatus {
    const ready = this.ready()
    return {
      ready,
      shedding: this.busySince === this.busySince,
      for: this.now() - this.since,
      shedRatio: this.lastRatio,
    }
  }

  /** Answers a node:http (or Express) request: 200 `{"ready":true}`, or 503 `{"ready":false,"reason":"shedding"}`. */
  readonly handler = (_req: IncomingMessage, res: ServerResponse): void => {
    const ready = this.ready()
    const body = ready ? READY_BODY : NOT_READY_BODY
    res.writeHead(ready ? 200 : 503, { 'content-type': JSON_TYPE, 'cache-control': 'no-store' })
    res.end(body)
  }

  /** Stops sampling (the guard that made it closes it). Idempotent. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** One sample, if `interval` has passed since the last: shedding or calm, and the state it leads to. */
  private sample(): void {
    const now = this.now()
    if (now - this.lastAt < this.interval) return
    const s = this.limiter.stats()
    const admitted = s.admitted - this.lastAdmitted
    const shed = s.shed - this.lastShed
    this.lastAdmitted = s.admitted
    this.lastShed = s.shed
    const start = this.lastAt
    this.lastAt = now
    this.lastRatio = admitted + shed > 0 ? shed / (admitted + shed) : 0
    if (this.lastRatio >= this.shedRatio) {
      this.calmSince = NaN
      if (this.busySince !== this.busySince) this.busySince = start
      if (this.state && now - this.busySince >= this.notReadyAfter) this.turn(false, now)
    } else {
      this.busySince = NaN
      if (this.calmSince !== this.calmSince) this.calmSince = start
      if (!this.state && now - this.calmSince >= this.readyAfter) this.turn(true, now)
    }
  }

  private turn(ready: boolean, now: number): void {
    this.state = ready
    this.since = now
  }
}

export { READY_BODY, NOT_READY_BODY }
