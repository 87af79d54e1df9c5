import type { SharedRegion } from '../regions/shared-region'
import type { ShadowLabel, ShadowPlacement } from './rule-block'

/** A component's shadow mode as its stats and `bulwark top` report it (docs/rules/shadow.md). */
export interface ShadowStats {
  /** Whether the component decides in shadow mode now: it counts what it would refuse and admits it. */
  enabled: boolean
  /** Requests it admitted in shadow mode that it would have refused, host-wide, by reason (and priority class). */
  wouldRefuse: ShadowCount[]
}

/** Requests admitted in shadow mode that one reason (and priority class) would have refused. */
export interface ShadowCount {
  /** Why it would have refused them: `rate`, `open`, `in-flight`, `key-concurrency`... (docs/rules/shadow.md). */
  reason: string
  /** The priority class, for a limiter that has them (BbrLimiter). */
  priority?: string
  count: number
}

/** The field every live rule takes besides its own (docs/rules/shadow.md). */
export interface ShadowRule {
  /**
   * Shadow mode: true, the component decides as usual, counts what it would refuse (stats' `rules.shadow`, the
   * metrics, `bulwark top`) and admits it; false, it enforces again. Kept when a change does not name it.
   */
  shadow?: boolean
}

/**
 * The counters of what a component would have refused in shadow mode: one lane per member, which only that member
 * writes (no atomics, no shared cache line on the shadow path), summed when read.
 */
export class ShadowTally {
  declare private readonly f64: Float64Array
  /** f64 index of this member's first counter. */
  declare private readonly own: number
  declare private readonly first: number
  declare private readonly stride: number
  declare private readonly region: SharedRegion
  declare readonly labels: readonly ShadowLabel[]

  constructor(region: SharedRegion, placement: ShadowPlacement) {
    const { tally, labels } = placement
    this.region = region
    this.f64 = region.f64
    this.labels = labels
    this.first = (region.base + tally.offset) / 8
    this.stride = tally.stride / 8
    this.own = this.first + region.member * this.stride
  }

  /** Counts one request admitted that label `slot` would have refused. */
  count(slot: number): void {
    this.f64[this.own + slot] += 1
  }

  /** The host-wide counts, by label. */
  read(): ShadowCount[] {
    const lanes = this.region.laneHighWater()
    return this.labels.map((label, slot) => {
      let count = 0
      for (let lane = 0; lane < lanes; lane++) count += this.f64[this.first + lane * this.stride + slot]
      return { ...label, count }
    })
  }
}
