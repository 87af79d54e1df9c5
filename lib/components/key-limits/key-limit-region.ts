// The KeyConcurrencyLimiter's region: every key's count in one keyed table (docs/rules/keyed-table.md, "Count
// slots"), the rule block that holds `max` for every member of the host, and, when shared, each member's journal of
// what it holds (so that a dead member's counts come back).
import { CountTable } from '../../foundation/keyed-table/count-table'
import { HolderJournal, placeJournal } from '../../foundation/keyed-table/holder-journal'
import type { FingerprintFunction } from '../../foundation/keyed-table/keyed-table'
import { type KeyedTablePlacement, placeKeyedTable } from '../../foundation/keyed-table/keyed-table-layout'
import { native } from '../../foundation/native/load-native'
import { LiveRules } from '../../foundation/live-rules/live-rules'
import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { type LanePlacement, RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import type { ResolvedSharing } from '../../foundation/regions/sharing-options'
import { checkNumber } from '../../foundation/common/validate'

/** The region kind (`bulwark set` and `bulwark top` find the limiter by it). */
export const KEY_LIMIT_KIND = 'key-concurrency-limiter'

/** The rule's one field. */
export const KEY_LIMIT_FIELDS = ['max'] as const

/** The most requests in flight a key may have: a count slot holds 20 bits. */
export const MAX_PER_KEY = 2 ** 20 - 1

/** `max`, validated (the constructor's check, and live rules'). */
export function resolveMax(value: unknown): number {
  return checkNumber('max', value, { integer: true, min: 1, max: MAX_PER_KEY })
}

/** What sizes a limiter's table; its members agree on it (its region's fingerprint). */
export interface KeyLimitShape {
  maxKeys: number
  overflowKeys: number
  maxKeyLength: number
}

export interface KeyLimitPlacement {
  layout: RegionLayout
  table: KeyedTablePlacement
  rules: RulePlacement
  /** Each member's journal (shared regions only). */
  journal: LanePlacement | undefined
}

/**
 * The layout of the limiter's region. The fingerprint leaves `max` out: members may be made with different values
 * (each obeys its own until the first `configure`, then the rule), as before live rules.
 */
export function placeKeyLimit(lanes: number, shared: boolean, s: KeyLimitShape, max: number): KeyLimitPlacement {
  const layout = new RegionLayout(KEY_LIMIT_KIND, lanes).describe(
    `v3 rules keys=${s.maxKeys} overflow=${s.overflowKeys} keyLength=${s.maxKeyLength}`,
  )
  const table = placeKeyedTable(layout, {
    maxKeys: s.maxKeys,
    seed: native.keyedSeed(),
    origin: 0,
    ticksPerMs: 1,
    overflowTicksPerMs: 1,
  })
  const rules = placeRules(layout, [max], [{ reason: 'key-concurrency' }])
  return { layout, table, rules, journal: shared ? placeJournal(layout) : undefined }
}

/** The shape a limiter region's fingerprint names. */
export function keyLimitShape(f: { number(key: string): number }): KeyLimitShape {
  return { maxKeys: f.number('keys'), overflowKeys: f.number('overflow'), maxKeyLength: f.number('keyLength') }
}

export interface KeyLimitRegion {
  region: SharedRegion
  table: CountTable
  rules: LiveRules
  journal: HolderJournal | undefined
}

/** Opens (or attaches to) the limiter's region; `apply` is told each `max` the live rule makes this member obey. */
export function openKeyLimitRegion(
  sharing: ResolvedSharing,
  max: number,
  shape: KeyLimitShape,
  apply: (max: number) => void,
  hash?: FingerprintFunction,
): KeyLimitRegion {
  const placed = placeKeyLimit(sharing.lanes, sharing.shared !== undefined, shape, max)
  const region = SharedRegion.forComponent(sharing.shared, placed.layout, sharing.namespace)
  const table = new CountTable(region, placed.table, shape.maxKeyLength, hash)
  const rules = new LiveRules(region, placed.rules, {
    fields: KEY_LIMIT_FIELDS,
    resolve: (rule) => [resolveMax(rule.max)],
    apply: (values) => {
      table.overflowMax = Math.min(MAX_PER_KEY, values[0] * shape.overflowKeys)
      apply(values[0])
    },
  })
  table.overflowMax = Math.min(MAX_PER_KEY, max * shape.overflowKeys)
  const giveBack = (slot: number) => table.give(slot)
  const journal = placed.journal && new HolderJournal(region, placed.journal, giveBack)
  if (journal !== undefined) table.useJournal(journal)
  return { region, table, rules, journal }
}
