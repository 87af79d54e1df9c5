import { AtomicCounter } from '../shared/atomic-counter'
import type { BucketTotals, RollingWindow } from '../shared/rolling-window'
import type { SharedRegion } from '../shared/shared-region'
import { CELL, type LatencyPlacement, PHASE } from './latency-layout'
import type { LatencyOptions } from './latency-options'
import { type LatencyStats, latencyStats } from './latency-stats'

/** Steps per bucket: the limit is recomputed this often (in-flight counts change faster than buckets complete). */
const STEPS_PER_BUCKET = 4
/** A measurement wants this many response times; it reads older buckets until it has them. */
const WANTED_SAMPLES = 8
/** Response times a candidate for the base is the mean of (when the buckets read hold that many). */
const BASE_SAMPLES = 64
/** Fewer response times than this are no measurement. */
const USABLE_SAMPLES = 3
/** How far back a measurement reads, in buckets. */
const MAX_BACK = 20
/**
 * Inflation under this many ms never counts, whatever the share: a handler answering in microseconds doubles its
 * time on a garbage collection or a busy loop tick without any queue downstream.
 */
const MIN_TOLERANCE_MS = 2
/** Steps over which the requests in flight must surge before shedding starts. */
const SURGE_STEPS = 1
/** Buckets a slower growth must last (with the requests in flight not back under where they were). */
const SLOW_GROWTH_BUCKETS = 5
/** A step gap in which this many completions were due is a pause of the gateway, not a lull in traffic. */
const PAUSED_COMPLETIONS = 4
/** Steps in a row without inflation before shedding stops (5 buckets). */
const EXIT_CALM = 5 * STEPS_PER_BUCKET
/** Bounds on one step's gradient: at most halve, at most double the limit. */
const MIN_GRADIENT = 0.5
const MAX_GRADIENT = 2
/** The limit is held to this multiple of the requests actually in flight (it cannot grow while unused). */
const USE_FACTOR = 2
/** The limit holds requests back when those in flight reach this share of it. */
const PRESSED = 0.8
/** A probe holds requests in flight to this share of what the base says the upstream serves without a queue. */
const PROBE_SHARE = 0.65
/** A probe whose upstream completes this share of its rate before the probe did not drain its queue. */
const SATURATED = 0.95
/** The upstream changed (measure the base now) when its response time rises or its rate falls this much. */
const RT_JUMP = 1.5
const RATE_DROP = 0.7
/** The anchors are moving averages of the response time and rate, each step weighing this much. */
const ANCHOR_WEIGHT = 0.1
/** Response times a probe measures (it reads buckets after its wait until it has them). */
const PROBE_SAMPLES = 12
/** A probe confirms the base when it lands within this share of it. */
const CONFIRM = 0.2
/** The gap between probes doubles up to this many probeIntervals while they confirm the base. */
const MAX_GAP_FACTOR = 32

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
 * one cell, `cap` (0 while the rule does not shed). Bursts at normal load, a cold start (no base yet) and the
 * burst after a pause of the gateway shed nothing.
 */
export class LatencyController {
  /** f64 index of the `cap` cell: the owner compares its requests in flight with it. */
  readonly capIndex: number
  private readonly f64: Float64Array
  private readonly at: number
  private readonly stepCell: AtomicCounter
  private readonly passes: RollingWindow
  private readonly rts: RollingWindow
  private readonly bucketMs: number
  private readonly stepMs: number
  private readonly start: number
  private readonly maxBack: number
  private readonly o: LatencyOptions
  private readonly inFlight: () => number
  private readonly scratch: BucketTotals = { count: 0, sum: 0 }
  // The last measurement (see measure()).
  private rt = 0
  private longRt = 0
  private longSamples = 0
  private rate = 0
  private stalledMs = 0

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
    this.rts = windows.rts
    this.bucketMs = windows.passes.bucketMs
    this.stepMs = this.bucketMs / STEPS_PER_BUCKET
    this.start = windows.passes.epochStart(0)
    this.maxBack = Math.min(windows.passes.size - 1, MAX_BACK)
    this.o = options
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

  stats(): LatencyStats {
    return latencyStats(this.f64, this.at)
  }

  private read(name: keyof typeof CELL): number {
    return this.f64[this.at + CELL[name]]
  }

  private set(name: keyof typeof CELL, value: number): void {
    this.f64[this.at + CELL[name]] = value
  }

  private update(epoch: number, now: number): void {
    const inFlight = this.inFlight()
    if (!this.measure(epoch, 0, inFlight)) return
    const o = this.o
    let base = this.read('base')
    if (base === 0 || this.longRt < base) {
      base = this.longRt
      this.set('base', base)
    }
    if (this.longSamples > this.read('baseSamples')) this.set('baseSamples', this.longSamples)
    this.set('measured', this.rt)
    // A response time is known only once its queue is behind it; the requests in flight now, at the rate the
    // upstream completes them, tell what a request admitted now will take, without that lag.
    const expected = Math.max(this.rate > 0 ? inFlight / this.rate : this.rt, this.stalledMs)
    this.set('sample', expected)
    // Envoy's gradient, on a limit that may not sit far above what is used (Netflix's guard against growing
    // while the application, not the upstream, limits the traffic).
    const tolerated = base * (1 + o.buffer) + MIN_TOLERANCE_MS
    const used = Math.min(this.read('limit') || Infinity, Math.max(o.minLimit, USE_FACTOR * inFlight))
    const g = clamp(tolerated / expected, MIN_GRADIENT, MAX_GRADIENT)
    const limit = clamp(used * g + Math.sqrt(used * g), o.minLimit, o.maxLimit)
    this.set('limit', limit)
    const inflated = expected > tolerated
    if (this.read('phase') === PHASE.idle) {
      // A cold start sheds nothing until the base is learned from enough response times.
      const learned = this.read('baseSamples') >= PROBE_SAMPLES
      if (this.queueGrows(now, inflated, inFlight, tolerated) && learned) this.startShedding(now, limit)
      return
    }
    const calm = inflated || this.rt > tolerated ? 0 : this.read('calm') + 1
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
      changed = this.rt > RT_JUMP * anchor || this.rate < RATE_DROP * anchorRate
      this.set('anchor', anchor === Infinity ? this.rt : anchor + ANCHOR_WEIGHT * (this.rt - anchor))
      this.set('anchorRate', anchorRate === 0 ? this.rate : anchorRate + ANCHOR_WEIGHT * (this.rate - anchorRate))
    }
    const due = changed || now >= this.read('nextProbe')
    // Measuring the base costs requests, so only while the limit holds requests back: otherwise a wrong base
    // does no harm, and what inflates the response time is not our queue.
    if (due && inFlight >= PRESSED * limit) {
      // After a probe the upstream changed for, what it did before is no reference any more.
      this.set('probeForChange', changed ? 1 : 0)
      this.startProbe(now, base, limit, PROBE_SHARE, this.rate)
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
    const paused = gap > 2 * this.stepMs && gap * this.rate > PAUSED_COMPLETIONS
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
      now - since >= SURGE_STEPS * this.stepMs && grown >= Math.max(this.o.minLimit, (this.rate * tolerated) / 2)
    return surge || (now - since >= SLOW_GROWTH_BUCKETS * this.bucketMs && grown >= 0)
  }

  private startShedding(now: number, limit: number): void {
    this.set('phase', PHASE.shedding)
    this.set('calm', 0)
    this.set('probeGap', this.o.probeInterval)
    this.rearm(now, this.o.probeInterval)
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
    const wait = Math.max(this.bucketMs, Math.min(2 * this.read('sample'), MAX_BACK * this.bucketMs))
    this.set('phase', PHASE.probing)
    this.set('probeLimit', limit)
    this.set('probeShare', share)
    this.set('probeRate', rateBefore)
    this.set('probeFrom', now + wait)
    this.set('probeDeadline', now + wait + (this.maxBack + 1) * this.bucketMs)
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
    const measured = epoch > first && this.measure(epoch, first, this.inFlight()) && this.stalledMs === 0
    const late = now >= this.read('probeDeadline')
    if (!measured || (this.longSamples < PROBE_SAMPLES && !late)) {
      if (late) this.endProbe(now, this.read('probeGap'), this.read('probeForChange') === 0)
      return
    }
    const base = this.read('base')
    const share = this.read('probeShare') / 2
    const rateBefore = this.read('probeRate')
    this.set('probes', this.read('probes') + 1)
    const undrained = this.longRt > (1 + CONFIRM) * base || this.rate >= SATURATED * rateBefore
    if (undrained && share * rateBefore * base > this.o.minLimit) {
      this.startProbe(now, base, this.read('probeLimit'), share, rateBefore)
      return
    }
    // Within CONFIRM either way: the same base, measured once more (averaged, so that one noisy probe moves it
    // half as far).
    const confirmed = Math.abs(this.longRt - base) <= CONFIRM * base
    this.set('base', confirmed ? (base + this.longRt) / 2 : this.longRt)
    this.set('measured', this.longRt)
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

  /**
   * Reads the completed buckets from `epoch - 1` back (not before `first`). The first WANTED_SAMPLES response
   * times give `rt` (their mean) and `rate` (completions per ms over their buckets); reading on up to
   * BASE_SAMPLES gives `longRt` and `longSamples`, the candidate for the base (a minimum of small means would learn a base biased
   * low by their noise). When nothing completed for longer than the base allows while requests are in flight,
   * that time goes to `stalledMs` (an upstream that hangs is the worst inflation of all).
   */
  private measure(epoch: number, first: number, inFlight: number): boolean {
    let count = 0
    let sum = 0
    let passes = 0
    let buckets = 0
    let silent = 0
    let longCount = 0
    let longSum = 0
    const oldest = Math.max(first, epoch - this.maxBack)
    for (let e = epoch - 1; e >= oldest && longCount < BASE_SAMPLES; e--) {
      const p = this.passes.readEpoch(e, this.scratch).sum
      const r = this.rts.readEpoch(e, this.scratch)
      longCount += r.count
      longSum += r.sum
      if (count >= WANTED_SAMPLES) continue
      if (p === 0 && silent === buckets) silent++
      count += r.count
      sum += r.sum
      passes += p
      buckets++
    }
    this.longSamples = longCount
    this.longRt = longCount >= USABLE_SAMPLES ? longSum / longCount : 0
    const base = this.read('base')
    const stalled = silent * this.bucketMs
    const tolerated = base * (1 + this.o.buffer) + MIN_TOLERANCE_MS
    const hung = inFlight > 0 && base > 0 && silent >= 2 && stalled > 2 * tolerated
    this.stalledMs = hung ? stalled : 0
    if (count < USABLE_SAMPLES) {
      if (!hung) return false
      this.rt = this.read('measured')
      this.rate = 0
      return true
    }
    this.rt = sum / count
    this.rate = passes / (buckets * this.bucketMs)
    return true
  }
}
