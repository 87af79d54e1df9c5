import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { checkInteger, checkPlacementObject, checkSpan } from './placement-checks'
import type { LanePlacement } from './region-layout'
import { checkRegion, type SharedRegion } from './shared-region'

/**
 * A counter with one cell per member: `add` is a plain store to this member's own cache line (single writer, no
 * contention, nothing lost), `total` sums the lanes. Allocate the lanes with `reclaim` for a gauge (requests in
 * flight, say): a member's cell is zeroed when it detaches or its process dies, so the total never keeps what a
 * dead process was holding.
 */
export class LaneCounter {
  declare private readonly region: SharedRegion
  declare private readonly f64: Float64Array
  declare private readonly own: number
  declare private readonly first: number
  declare private readonly strideCells: number
  /** A region of one member (not shared): the total is this member's own cell. */
  declare private readonly single: boolean

  /** Counter number `cell` (0-based) of a lane set. */
  constructor(region: SharedRegion, placement: LanePlacement, cell = 0) {
    checkRegion(region)
    const p = checkPlacementObject<LanePlacement>(placement)
    const cells = checkInteger('placement.cells', p.cells, 1, 2 ** 29)
    checkInteger('placement.stride', p.stride, cells * 8, 2 ** 32)
    if (p.stride % 8 !== 0) throw new InvalidArgumentError('placement.stride', p.stride, 'a multiple of 8')
    checkInteger('cell', cell, 0, cells - 1)
    checkSpan('placement.offset', region, p.offset, (region.lanes - 1) * p.stride + cells * 8, 8)
    this.region = region
    this.f64 = region.f64
    this.first = (region.base + placement.offset) / 8 + cell
    this.strideCells = placement.stride / 8
    this.own = this.first + region.member * this.strideCells
    this.single = !region.shared
  }

  /** Adds a finite number; anything else would poison the lane for good, so it is refused. */
  add(value: number): void {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InvalidArgumentError('value', value, 'a finite number')
    this.f64[this.own] += value
  }

  /** This member's own value. */
  get local(): number {
    return this.f64[this.own]
  }

  /** Sum over every member. */
  total(): number {
    // Short, so that V8 inlines it into hot paths whatever their inlining budget has left: the loop is sum()'s.
    return this.single ? this.f64[this.own] : this.sum()
  }

  private sum(): number {
    const lanes = this.region.laneHighWater()
    let sum = 0
    for (let lane = 0, i = this.first; lane < lanes; lane++, i += this.strideCells) sum += this.f64[i]
    return sum
  }
}
