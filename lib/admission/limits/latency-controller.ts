import { AtomicCounter } from '../../foundation/regions/atomic-counter'
import type { RollingWindow } from '../../foundation/regions/rolling-window'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import { CELL, type LatencyPlacement, PHASE } from './latency-layout'
import type { LatencyOptions } from './latency-options'
import { type LatencyStats, latencyStats } from './latency-stats'
import { WindowMeasure } from './window-measure'
import {
  STEPS_PER_BUCKET,
  MIN_TOLERANCE_MS,
  SURGE_STEPS,
  SLOW_GROWTH_BUCKETS,
  PAUSED_COMPLETIONS,
  EXIT_CALM,
  MIN_GRADIENT,
  MAX_GRADIENT,
  USE_FACTOR,
  PRESSED,
  PROBE_SHARE,
  SATURATED,
  RT_JUMP,
  RATE_DROP,
  ANCHOR_WEIGHT,
  PROBE_SAMPLES,
  CONFIRM,
  MAX_GAP_FACTOR,
} from './latency-constants'

const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v)

/**
 * A concurrency limit learned from latency alone (docs/rules/latency.md). The response time a request
 * admitted now can expect is the requests in flight over the rate the upstream completes them (Little's law);
 * when it stays over the learned base (plus a buffer) and the queue is not draining, requests over the limit are
 * shed, the limit following Envoy's gradient. The base is measured again while shedding (probes), as Envoy and
 * TCP BBR do, so that it neither drifts up under sustained load nor misses a real slowdown of the upstream.
 *
 * It reads its owner's rolling windows of passes and sampled response times. Each step (a quarter of a bucket)
 * the first member to reach it claims it (one compare-and-swap, host-wide) and recomputes; every request reads
 * one cell, `cap` (0 while the check does not shed). Bursts at normal load, a cold start (no base yet) and the
 * burst after a pause of the gateway shed nothing.
 */
export class LatencyController {
  /** f64 index of the `cap` cell: the owner compares its requests in flight with it. */
  declare readonly capIndex: number
  declare private readonly f64: Float64Array
  declare private readonly at: number
  declare private readonly stepCell: AtomicCounter
  declare private readonly passes: RollingWindow
  declare private readonly bucketMs: number
  declare private readonly stepMs: number
  declare private readonly start: number
  declare private readonly o: LatencyOptions
  declare private readonly inFlight: () => number
  declare private readonly m: WindowMeasure

  constructor(
    region: SharedRegion,
    placement: LatencyPlacement,
    windows: { passes: RollingWindow; rts: RollingWindow },
    options: LatencyOptions,
    inFlight: () => number,
  ) {
    this.f64 = region.f64
    this.at = (region.base + placement.cells) / 8
    this.capIndex = this.at + CELL.cap
    this.stepCell = new AtomicCounter(region, placement.epoch)
    this.passes = windows.passes
    this.bucketMs = windows.passes.bucketMs
    this.stepMs = this.bucketMs / STEPS_PER_BUCKET
    this.start = windows.passes.epochStart(0)
    this.m = new WindowMeasure(windows.passes, windows.rts)
    this.o = { ...options } // its own copy: a live rule retunes it
    this.inFlight = inFlight
  }

  /**
   * Claims the step `now` falls in and, if this member is the first, recomputes the limit. Returns when the next
   * step begins: the owner calls again once its clock reaches it.
   */
  step(now: number): number {
    const step = Math.max(0, Math.floor((now - this.start) / this.stepMs))
    const tag = (step % 0x7fffffff) + 1
    const seen = this.stepCell.load()
    if (seen !== tag && this.stepCell.compareExchange(seen, tag)) {
      const epoch = this.passes.epochAt(now)
      if (this.read('phase') === PHASE.probing) this.probeStep(epoch, now)
      else this.update(epoch, now)
    }
    return this.start + (step + 1) * this.stepMs
  }

  /**
   * Takes new tunables from a live rule (docs/rules/live-rules.md): they apply from the next step this member
   * claims (a new bound, at the limit's next computation; a new probe interval, at the next probe scheduled).
   */
  retune(tunables: Pick<LatencyOptions, 'buffer' | 'minLimit' | 'maxLimit' | 'probeInterval'>): void {
    const o = this.o
    o.buffer = tunables.buffer
    o.minLimit = tunables.minLimit
    o.maxLimit = tunables.maxLimit
    o.probeInterval = tunables.probeInterval
  }

  /** Whether a probe is measuring the base (host-wide): the owner then measures every response time. */
  get probing(): boolean {
    return this.read('phase') === PHASE.probing
  }

  stats(): LatencyStats {
    return latencyStats(this.f64, this.at)
  }

  /** Ms without a completion, requests in flight, that count as a hang: twice the tolerated response time. */
  private stallAfter(): number {
    const base = this.read('base')
    return base > 0 ? 2 * (base * (1 + this.o.buffer) + MIN_TOLERANCE_MS) : Infinity
  }

  private read(name: keyof typeof CELL): number {
    return this.f64[this.at + CELL[name]]
  }

  private set(name: keyof typeof CELL, value: number): void {
    this.f64[this.at + CELL[name]] = value
  }

  private update(epoch: number, now: number): void {
    const inFlight = this.inFlight()
    if (!this.m.take(epoch, 0, inFlight, this.stallAfter(), this.read('measured'))) return
    const o = this.o
    let base = this.read('base')
    if (base === 0 || this.m.longRt < base) {
      base = this.m.longRt
      this.set('base', base)
    }
    if (this.m.longSamples > this.read('baseSamples')) this.set('baseSamples', this.m.longSamples)
    this.set('measured', this.m.rt)
    // A response time is known only once its queue is behind it; the requests in flight now, at the rate the
    // upstream completes them, tell what a request admitted now will take, without that lag.
    const expected = Math.max(this.m.rate > 0 ? inFlight / this.m.rate : this.m.rt, this.m.stalledMs)
    this.set('sample', expected)
    // A response waiting for our own loop is late with no queue at the upstream (docs/rules/latency.md).
    const loopDelay = o.loopDelay()
    const tolerated = base * (1 + o.buffer) + MIN_TOLERANCE_MS + (loopDelay > 0 ? loopDelay : 0)
    const limit = this.gradient(epoch, expected, inFlight, tolerated)
    const inflated = expected > tolerated
    if (this.read('phase') === PHASE.idle) {
      // A cold start sheds nothing until the base is learned from enough response times.
      const learned = this.read('baseSamples') >= PROBE_SAMPLES
      if (this.queueGrows(now, inflated, inFlight, tolerated) && learned) this.startShedding(now, limit)
      return
    }
    const calm = inflated || this.m.rt > tolerated ? 0 : this.read('calm') + 1
    this.set('calm', calm)
    if (calm >= EXIT_CALM) {
      this.set('phase', PHASE.idle)
      this.set('watching', 0)
      this.set('cap', 0)
      return
    }
    // Anchored once the limit has settled after shedding began or the base was measured (the probe's own
    // response times and rates are no reference for later ones).
    let changed = false
    if (now >= this.read('armedAt')) {
      const anchor = this.read('anchor')
      const anchorRate = this.read('anchorRate')
      changed = this.m.rt > RT_JUMP * anchor || this.m.rate < RATE_DROP * anchorRate
      this.set('anchor', anchor === Infinity ? this.m.rt : anchor + ANCHOR_WEIGHT * (this.m.rt - anchor))
      this.set('anchorRate', anchorRate === 0 ? this.m.rate : anchorRate + ANCHOR_WEIGHT * (this.m.rate - anchorRate))
    }
    const due = changed || now >= this.read('nextProbe')
    // Measuring the base costs requests, so only while the limit holds requests back: otherwise a wrong base
    // does no harm, and what inflates the response time is not our queue.
    if (due && this.read('peakInFlight') >= PRESSED * limit) {
      // After a probe the upstream changed for, what it did before is no reference any more.
      this.set('probeForChange', changed ? 1 : 0)
      this.startProbe(now, base, limit, PROBE_SHARE, this.m.rate)
    } else this.set('cap', limit)
  }

  /**
   * Whether a queue is building at the upstream, not just standing for a moment: the response time a request can
   * expect stays over the tolerated one, and the requests in flight grow fast (by half of what the upstream
   * serves without a queue within two steps: a surge) or, for slower growth, have not drained after a while. A
   * burst that drains by itself, such as the requests that waited during a pause of the gateway, sheds nothing.
   */
  private queueGrows(now: number, inflated: boolean, inFlight: number, tolerated: number): boolean {
    // Nothing happened for many times the usual gap between completions: the gateway itself stood still (a
    // garbage collection), and the requests that waited meanwhile arrive at once. Watch afresh after it.
    const gap = now - this.read('lastStepAt')
    this.set('lastStepAt', now)
    const paused = gap > 2 * this.stepMs && gap * this.m.rate > PAUSED_COMPLETIONS
    if (!inflated || paused) {
      this.set('watching', 0)
      return false
    }
    if (this.read('watching') === 0) {
      this.set('watching', 1)
      this.set('inflatedSince', now)
      this.set('inflatedFrom', inFlight)
    }
    const since = this.read('inflatedSince')
    const grown = inFlight - this.read('inflatedFrom')
    const surge =
      now - since >= SURGE_STEPS * this.stepMs && grown >= Math.max(this.o.minLimit, (this.m.rate * tolerated) / 2)
    return surge || (now - since >= SLOW_GROWTH_BUCKETS * this.bucketMs && grown >= 0)
  }

  /**
   * Envoy's gradient, once per bucket, on what the last bucket's steps saw: the mean of their expected response
   * times and the most requests in flight (a single reading of either is noisy: a momentary lull, a burst). The
   * limit may not sit far above what is used (Netflix's guard against growing while the application, not the
   * upstream, limits the traffic). Returns the limit.
   */
  private gradient(epoch: number, expected: number, inFlight: number, tolerated: number): number {
    const o = this.o
    let limit = this.read('limit')
    const count = this.read('expectedCount')
    if (epoch !== this.read('gradientEpoch') && count > 0) {
      const mean = this.read('expectedSum') / count
      const peak = Math.max(this.read('peakInFlight'), this.m.rate * this.m.rt) // Little's mean, if higher
      const used = Math.min(limit || Infinity, Math.max(o.minLimit, USE_FACTOR * peak))
      const g = clamp(tolerated / mean, MIN_GRADIENT, MAX_GRADIENT)
      limit = clamp(used * g + Math.sqrt(used * g), o.minLimit, o.maxLimit)
      this.set('limit', limit)
      this.set('expectedSum', 0)
      this.set('expectedCount', 0)
      this.set('peakInFlight', 0)
    }
    this.set('gradientEpoch', epoch)
    this.set('expectedSum', this.read('expectedSum') + expected)
    this.set('expectedCount', this.read('expectedCount') + 1)
    this.set('peakInFlight', Math.max(this.read('peakInFlight'), inFlight))
    return limit || Math.max(o.minLimit, USE_FACTOR * inFlight) // before the first bucket: room for twice the use
  }

  private startShedding(now: number, limit: number): void {
    this.set('phase', PHASE.shedding)
    this.set('calm', 0)
    // The probe schedule outlives a pause in shedding: an upstream at its capacity stops and starts shedding every
    // few seconds, and a probe 1 s after each start cost it a few percent of its throughput.
    this.set('probeGap', Math.max(this.read('probeGap'), this.o.probeInterval))
    this.rearm(now, Math.max(this.o.probeInterval, this.read('nextProbe') - now))
    this.set('cap', limit)
  }

  /**
   * Schedules the next probe. The anchors (what the upstream did once the limit settled) are kept across a probe
   * that confirmed the base, so that a change right after it is still seen; otherwise they are taken afresh.
   */
  private rearm(now: number, gap: number, keepAnchors = false): void {
    if (!keepAnchors) {
      this.set('anchor', Infinity)
      this.set('anchorRate', 0)
    }
    this.set('armedAt', now + this.o.probeInterval)
    this.set('nextProbe', now + gap)
  }

  /**
   * Holds requests in flight under what the base says the upstream serves without a queue (`share` of it), long
   * enough for our own queue there to drain, then measures the response time (probeStep).
   */
  private startProbe(now: number, base: number, limit: number, share: number, rateBefore: number): void {
    const wait = Math.max(this.bucketMs, Math.min(2 * this.read('sample'), this.m.maxBack * this.bucketMs))
    this.set('phase', PHASE.probing)
    this.set('probeLimit', limit)
    this.set('probeShare', share)
    this.set('probeRate', rateBefore)
    this.set('probeFrom', now + wait)
    this.set('probeDeadline', now + wait + (this.m.maxBack + 1) * this.bucketMs)
    this.set('cap', Math.max(this.o.minLimit, share * rateBefore * base))
  }

  /**
   * Ends a probe once its buckets hold enough response times. The upstream still completing requests as fast as
   * before the probe, or a response time over the base, means the probe held too many requests to drain our own
   * queue there (the base it started from was too high, or the upstream lost slots): a deeper probe follows.
   * Otherwise the response time measured is the base: confirmed when close to it (the next probe comes twice as
   * late), changed otherwise (the base was learned under load, or the upstream changed; the next probe comes soon).
   */
  private probeStep(epoch: number, now: number): void {
    const first = this.passes.epochAt(this.read('probeFrom')) + 1 // the first bucket wholly after the wait
    const measured = epoch > first && this.m.take(epoch, first, this.inFlight(), Infinity, this.read('measured'))
    const late = now >= this.read('probeDeadline')
    if (!measured || (this.m.longSamples < PROBE_SAMPLES && !late)) {
      if (late) this.endProbe(now, this.read('probeGap'), this.read('probeForChange') === 0)
      return
    }
    const base = this.read('base')
    const share = this.read('probeShare') / 2
    const rateBefore = this.read('probeRate')
    this.set('probes', this.read('probes') + 1)
    const undrained = this.m.longRt > (1 + CONFIRM) * base || this.m.rate >= SATURATED * rateBefore
    if (undrained && share * rateBefore * base > this.o.minLimit) {
      this.startProbe(now, base, this.read('probeLimit'), share, rateBefore)
      return
    }
    // Within CONFIRM either way: the same base, measured once more (averaged, so that one noisy probe moves it
    // half as far).
    const confirmed = Math.abs(this.m.longRt - base) <= CONFIRM * base
    this.set('base', confirmed ? (base + this.m.longRt) / 2 : this.m.longRt)
    this.set('measured', this.m.longRt)
    const gap = confirmed ? Math.min(2 * this.read('probeGap'), MAX_GAP_FACTOR * this.o.probeInterval) : 0
    this.endProbe(now, gap || this.o.probeInterval, confirmed && this.read('probeForChange') === 0)
  }

  private endProbe(now: number, gap: number, keepAnchors: boolean): void {
    const limit = this.read('probeLimit')
    this.set('phase', PHASE.shedding)
    this.set('limit', limit)
    this.set('calm', 0)
    this.set('probeGap', gap)
    this.rearm(now, gap, keepAnchors)
    this.set('cap', limit)
  }
}
