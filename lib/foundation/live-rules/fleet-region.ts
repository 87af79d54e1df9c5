// The host's region of a fleet's rules, `fleet.<namespace>.rules` (docs/readme/fleet.md, "One watcher per host"):
// who watches the source (the leader word and each member's heartbeat), what the host obeys (the host's rules as
// JSON), and the watcher's health (a few numbers, and a status text). Every process that follows the source joins
// it; only the watcher (lib/ops/fleet) writes it. Here, below both, so that `bulwark top` (lib/ops/top) reads what
// the watcher writes without depending on the fleet's code.
import { type LanePlacement, RegionLayout } from '../regions/region-layout'
import { SharedRegion } from '../regions/shared-region'
import { placeText, TextBlock, type TextPlacement } from '../regions/text-block'

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

/** A refusal as the status keeps it (the newest few). */
export interface RulesRefusal {
  /** The document's version refused, or whose rule was refused on this host. */
  version: number
  component?: string
  region?: string
  reason: string
  /** Date.now(). */
  at: number
}

/** What the watcher says about itself in the host's region (JSON in its status block). */
export interface WatcherStatus {
  source: string
  host: string
  labels: Record<string, string>
  watcher: { pid: number; threadId: number }
  /** Of the document the host obeys: its last change's author and time, and whether the host takes its canary. */
  author?: string
  time?: string
  canary: boolean
  lastError?: string
  refusals: RulesRefusal[]
}

/**
 * What a follower (lib/ops/fleet/rules-follower.ts) reports, from this region: its `stats()`, which the exporters
 * sample. The host's view, the same from every member.
 */
export interface RulesFollowerStats {
  namespace: string
  /** The source, as the watcher shows it ('' before a watcher started). */
  source: string
  /** Whether this member watches the source for the host. */
  watching: boolean
  /** The watching member's process, if any. */
  watcherPid: number | undefined
  /** The version the host obeys (0: none). */
  version: number
  /** The host takes the document's canary. */
  canary: boolean
  /** The watcher is connected to the source. */
  sourceUp: boolean
  /** Ms since the watcher last heard the source (how stale the host's rules may be); Infinity if never. */
  staleMs: number
  /** The host obeys the last good rules from disk, not yet confirmed by the source. */
  fromDisk: boolean
  /** Rules and documents the watcher refused (a failed check, a region that would not take a rule). */
  refused: number
  /** Versions the watcher applied. */
  applied: number
  /** Rules this member's new regions could not take. */
  refusedHere: number
}

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

/** The status a region holds, or undefined (none yet, or not readable). */
export function readStatus(region: FleetRegion): WatcherStatus | undefined {
  const read = region.status.read()
  if (read === undefined || read.text === '') return undefined
  try {
    return JSON.parse(read.text) as WatcherStatus
  } catch {
    return undefined
  }
}
