import { LaneCounter } from '../foundation/regions/lane-counter'
import type { LanePlacement, RegionLayout, WindowPlacement } from '../foundation/regions/region-layout'
import { RollingWindow } from '../foundation/regions/rolling-window'
import { SharedRegion } from '../foundation/regions/shared-region'
import { preciseNow } from '../foundation/signals/clock'
import { RtSampler } from './rt-sampler'
import { TokenTable } from './token-table'

/** The cells of a region that the core counts in: every limiter on requests in flight lays these out. */
export interface CorePlacement {
  layout: RegionLayout
  /** Requests in flight, one reclaimable lane per member. */
  inFlight: LanePlacement
  /** Per-member statistics: the admitted count of each class from `stat.admitted`, invalid releases. */
  stats: LanePlacement
  /** Completions and sampled response times, by bucket. */
  passes: WindowPlacement
  rts: WindowPlacement
}

export interface CoreSetup {
  /** The component's resolved options: its `shared` name and namespace, and the clock a test injected, if any. */
  options: { shared: string | undefined; namespace: string | undefined; now: (() => number) | undefined }
  placement: CorePlacement
  /** Statistics cells: the lowest class's admitted count (a class's is `admitted + class`), invalid releases. */
  stat: { admitted: number; invalidReleases: number }
  /** The clock of the request path (response times are measured with the precise one, or the injected `now`). */
  now: () => number
  /** Response-time sampling (RtSampler): one in `every`, or following the traffic with `auto`. */
  sampling: { every: number; auto: boolean; bucketMs: number }
  /** Token slots to begin with (a power of two). */
  initialTokens?: number
}

/**
 * What every limit on requests in flight holds the same way, whatever decides it (BbrLimiter from the host's load,
 * AdaptiveBulkhead from an upstream's latency): its region's counting cells (requests in flight, admitted per class,
 * invalid releases, completions and response times by bucket), the tokens that guard release-once, which requests
 * get their response time measured, the clock readings of the request path, and detaching. The limit, what a
 * release records and what a refusal is are each subclass's.
 *
 * The request path (tryAcquire, release, execute and the reactions that end an execute) is written in each
 * subclass, not here: code shared by both classes sees both in a process that holds both (a gateway's inbound
 * limiter and its outbound bulkheads), and V8 then neither inlines it nor keeps its property loads monomorphic
 * (a bulkhead's pair beside a BbrLimiter, with release() here: 1.66 times as slow, median of 10 processes, in
 * one run on a busy machine whose ranges overlapped; the request path stays apart on the principle). The fields
 * stay on the instance: an object between the limiter and its cells would cost a load per request.
 */
export abstract class AdmissionCore {
  declare protected readonly region: SharedRegion
  declare protected readonly f64: Float64Array
  declare protected readonly now: () => number
  declare protected readonly preciseClock: () => number
  declare protected readonly statsPlacement: LanePlacement
  declare protected readonly statsBase: number
  /** f64 index of this member's admitted count of the lowest class (a field: STAT is an imported name). */
  declare protected readonly admittedBase: number
  declare protected readonly invalidReleasesIndex: number
  declare protected readonly ownInFlight: number
  declare protected readonly inFlightCounter: LaneCounter
  declare protected readonly passes: RollingWindow
  declare protected readonly rts: RollingWindow
  declare protected readonly sampler: RtSampler
  declare protected readonly tokens: TokenTable
  /**
   * The clock readings of the request path, in a typed array: [0] the reading of the request being admitted,
   * [1] that of the one being released, [2] the subclass's (BbrLimiter's load), which the calls read here rather than take as arguments. A double passed to a call V8 did not inline is boxed, 16 bytes each (13
   * to 16 bytes a pair on Node 20 before; docs/guide/bbr.md says why which calls stay calls varies by process).
   */
  protected readonly times = new Float64Array([-Infinity, -Infinity, 0])

  protected constructor(s: CoreSetup) {
    this.now = s.now
    this.preciseClock = s.options.now ?? preciseNow
    const p = s.placement
    const region = SharedRegion.forComponent(s.options.shared, p.layout, s.options.namespace)
    this.region = region
    this.f64 = region.f64
    const base = region.base
    this.statsPlacement = p.stats
    this.statsBase = (base + p.stats.offset + region.member * p.stats.stride) / 8
    this.admittedBase = this.statsBase + s.stat.admitted
    this.invalidReleasesIndex = this.statsBase + s.stat.invalidReleases
    this.inFlightCounter = new LaneCounter(region, p.inFlight)
    this.ownInFlight = (base + p.inFlight.offset + region.member * p.inFlight.stride) / 8
    this.passes = new RollingWindow(region, p.passes)
    this.rts = new RollingWindow(region, p.rts)
    this.sampler = new RtSampler(s.sampling.every, s.sampling.auto, s.sampling.bucketMs, this.preciseClock)
    this.tokens = new TokenTable(s.initialTokens)
  }

  /** Counts a release() of a token that was not outstanding (rare: kept out of release(), which V8 then inlines). */
  protected countInvalidRelease(): void {
    this.f64[this.invalidReleasesIndex] += 1
  }

  /** Requests in flight, host-wide when shared. */
  get inFlight(): number {
    return this.inFlightCounter.total()
  }

  /** Detaches from a shared region, giving back this instance's requests in flight. Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
