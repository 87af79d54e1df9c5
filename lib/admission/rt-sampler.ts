/** Automatic sampling: response times wanted per half bucket from each member, and the sparsest sampling. */
const AUTO_SAMPLES = 32
const MAX_AUTO_SAMPLING = 1024
/** Automatic sampling: response times taken in a half bucket at one rate before it halves (traffic surged). */
const RAMP_SAMPLES = 2 * AUTO_SAMPLES

/**
 * Which admitted requests get their response time measured with the precise clock (about 45 ns a read here, more
 * than the rest of the limiter): one in `every` (a power of two), plus at least two per bucket so that low traffic
 * still gets response times. With `auto`, `every` follows the traffic: at each half bucket it becomes the largest
 * power of two that still gives AUTO_SAMPLES to twice that many response times per half bucket at the last half
 * bucket's traffic, so a busy limiter reads the clock on a sliver of its requests and a quiet one on all of them
 * (docs/rules/bbr.md). Traffic that surges within a half bucket (a burst after a quiet spell) halves the rate after
 * each RAMP_SAMPLES response times, so a burst of n requests is timed about RAMP_SAMPLES * log2(n / RAMP_SAMPLES)
 * times rather than n times.
 */
export class RtSampler {
  /** The mask in use: `usual`, or 0 (every request) while timeAll is on. */
  declare private mask: number
  declare private usual: number
  private all = false
  declare private readonly auto: boolean
  declare private readonly forcedEvery: number
  declare private readonly preciseClock: () => number
  private sequence = 0
  private sequenceAtResample = 0
  private nextForced = -Infinity
  /** Response times taken at the current rate since the last resample or ramp. */
  private taken = 0
  /** start()'s `now` for sample(): not an argument, which Node 20 boxed on the usual path (see BbrLimiter.times). */
  private startedAt = -Infinity

  constructor(every: number, auto: boolean, bucketMs: number, preciseClock: () => number) {
    this.mask = every - 1
    this.usual = this.mask
    this.auto = auto
    this.forcedEvery = bucketMs / 2
    this.preciseClock = preciseClock
  }

  /** The precise start of a request admitted at `now` if its response time is sampled, else `notSampled`. */
  start(now: number, notSampled: number): number {
    if ((++this.sequence & this.mask) !== 0 && now < this.nextForced) return notSampled
    this.startedAt = now
    return this.sample()
  }

  /**
   * start() with `now` read from `times[index]`: a double passed to a call V8 did not inline is boxed (16 bytes), and
   * the request path keeps its clock reading in a typed array for that reason (BbrLimiter's `times`).
   */
  startAt(times: Float64Array, index: number, notSampled: number): number {
    const now = times[index]
    if ((++this.sequence & this.mask) !== 0 && now < this.nextForced) return notSampled
    this.startedAt = now
    return this.sample()
  }

  /** Times every request while `on` (the latency check's probe wants its samples soon), then samples again. */
  timeAll(on: boolean): void {
    this.all = on
    this.mask = on ? 0 : this.usual
  }

  /** The precise start of a sampled request (kept out of start(), which V8 then inlines into its callers). */
  private sample(): number {
    const now = this.startedAt
    if (now >= this.nextForced) this.resample(now)
    else if (this.auto && !this.all && ++this.taken >= RAMP_SAMPLES) this.ramp()
    return this.preciseClock()
  }

  /** Halves the rate for the rest of the half bucket (the next resample sets it from the traffic again). */
  private ramp(): void {
    this.taken = 0
    if (this.usual < MAX_AUTO_SAMPLING - 1) this.usual = this.usual * 2 + 1
    this.mask = this.usual
  }

  private resample(now: number): void {
    this.nextForced = now + this.forcedEvery
    if (!this.auto) return
    this.taken = 0
    const seen = this.sequence - this.sequenceAtResample
    this.sequenceAtResample = this.sequence
    let every = 1
    while (every < MAX_AUTO_SAMPLING && every * 2 * AUTO_SAMPLES <= seen) every *= 2
    this.usual = every - 1
    if (!this.all) this.mask = this.usual
  }
}
