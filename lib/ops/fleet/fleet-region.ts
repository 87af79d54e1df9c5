// The host's region of a fleet's rules, `fleet.<namespace>.rules` (docs/readme/fleet.md, "One watcher per host"):
// who watches the source (the leader word and each member's heartbeat), what the host obeys (the host's rules as
// JSON), and the watcher's health (a few numbers, and a status text). Every process that follows the source joins
// it; only the watcher writes it.
import { type LanePlacement, RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { placeText, TextBlock, type TextPlacement } from './text-block'

export const FLEET_KIND = 'fleet'
/** The region's shared name (its namespace is the application's). */
export const FLEET_SHARED = 'rules'
/** The host's rules, as JSON, at most this long (far under a source document's bound: no history, no canary). */
export const RULES_BYTES = 512 * 1024
export const STATUS_BYTES = 16 * 1024

/** The watcher's numbers, each an f64 cell: readable by every member and by `bulwark top`. */
export const NUMBER = {
  /** The version the host obeys (0: none yet). */
  version: 0,
  /** Date.now() of the last time the watcher heard the source (the host's rules are that fresh). */
  confirmedAt: 1,
  /** 1 while the watcher is connected to the source. */
  sourceUp: 2,
  /** Rules and versions the watcher refused, since the region was made. */
  refused: 3,
  /** Versions the watcher applied, since the region was made. */
  applied: 4,
  /** 1 while the host obeys the last good rules read from disk, not yet confirmed by the source. */
  fromDisk: 5,
  /** Date.now() when the present watcher took over. */
  leaderSince: 6,
  /** Date.now() when the host's rules last changed. */
  changedAt: 7,
} as const
const NUMBERS = Object.keys(NUMBER).length

export interface FleetPlacement {
  layout: RegionLayout
  /** An Int32: the leading member's slot + 1 (0: none). */
  leader: number
  /** Per member: [heartbeat (host monotonic ms), leading (1 while it thinks it leads)], zeroed when it dies. */
  members: LanePlacement
  numbers: number
  rules: TextPlacement
  status: TextPlacement
}

export function placeFleet(lanes: number): FleetPlacement {
  const layout = new RegionLayout(FLEET_KIND, lanes).describe(`v1 rules=${RULES_BYTES} status=${STATUS_BYTES}`)
  const leader = layout.cell(0, true)
  const members = layout.lanes64(2, true)
  const numbers = layout.cell(0, true)
  for (let i = 1; i < NUMBERS; i++) layout.cell(0)
  return {
    layout,
    leader,
    members,
    numbers,
    rules: placeText(layout, RULES_BYTES),
    status: placeText(layout, STATUS_BYTES),
  }
}

/** One member's view of the host's fleet region. */
export class FleetRegion {
  readonly region: SharedRegion
  readonly rules: TextBlock
  readonly status: TextBlock
  readonly i32: Int32Array
  readonly f64: Float64Array
  readonly leaderIndex: number
  private readonly membersBase: number
  private readonly memberStride: number
  private readonly numbersIndex: number

  constructor(region: SharedRegion, placement: FleetPlacement) {
    this.region = region
    this.i32 = region.i32
    this.f64 = region.f64
    this.leaderIndex = (region.base + placement.leader) >>> 2
    this.membersBase = (region.base + placement.members.offset) / 8
    this.memberStride = placement.members.stride / 8
    this.numbersIndex = (region.base + placement.numbers) / 8
    this.rules = new TextBlock(region, placement.rules)
    this.status = new TextBlock(region, placement.status)
  }

  /** Joins (or makes) the host's region of `namespace`. */
  static open(namespace: string, lanes: number): FleetRegion {
    const placement = placeFleet(lanes)
    return new FleetRegion(SharedRegion.forComponent(FLEET_SHARED, placement.layout, namespace), placement)
  }

  get member(): number {
    return this.region.member
  }

  get lanes(): number {
    return this.region.lanes
  }

  heartbeat(slot: number): number {
    return this.f64[this.membersBase + slot * this.memberStride]
  }

  leading(slot: number): boolean {
    return this.f64[this.membersBase + slot * this.memberStride + 1] === 1
  }

  /** This member's heartbeat and leading flag. */
  mark(heartbeat: number, leading: boolean): void {
    const at = this.membersBase + this.member * this.memberStride
    this.f64[at] = heartbeat
    this.f64[at + 1] = leading ? 1 : 0
  }

  number(which: number): number {
    return this.f64[this.numbersIndex + which]
  }

  setNumber(which: number, value: number): void {
    this.f64[this.numbersIndex + which] = value
  }

  close(): void {
    this.region.close()
  }
}
