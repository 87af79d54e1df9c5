import { CountTable } from '../../../foundation/keyed-table/count-table'
import type { KeyedTable } from '../../../foundation/keyed-table/keyed-table'
import { RateTable } from '../../../foundation/keyed-table/rate-table'
import { KEY_LIMIT_FIELDS, keyLimitShape, placeKeyLimit } from '../../../components/key-limits/key-limit-region'
import {
  keyedLimiterLayout,
  keyedLimiterShape,
  placeKeyedLimiter,
} from '../../../components/ratelimit/keyed-rate-limits'
import { readRule } from '../../../foundation/live-rules/live-rules'
import { RuleBlock } from '../../../foundation/live-rules/rule-block'
import type { RegionSnapshot } from '../region-snapshot'
import type { KeyedTableView } from '../views'

/**
 * A KeyedLimiter's table (docs/rules/keyed-table.md): its keys and slots, the slots reused, the overflow's
 * decisions, the keys refused most (their text as requests sent it: the renderer escapes it), and its rule.
 */
export function inspectKeyedLimiter(snapshot: RegionSnapshot, _now: number, keys: number): KeyedTableView {
  const shape = keyedLimiterShape(snapshot.fingerprint)
  const layout = keyedLimiterLayout(snapshot.fingerprint.number('lanes'), shape)
  const placed = placeKeyedLimiter(layout, shape, 0)
  const region = snapshot.region(layout)
  const table = new RateTable(region, placed.table, shape.maxKeyLength)
  const rules = readRule(new RuleBlock(region, placed.rules), ['rate', 'burst'])
  return view('KeyedLimiter', table, shape.maxKeys, keys, rules)
}

/** A KeyConcurrencyLimiter's table: as a KeyedLimiter's, its rule being the `max` every member obeys. */
export function inspectKeyConcurrency(snapshot: RegionSnapshot, _now: number, keys: number): KeyedTableView {
  const shape = keyLimitShape(snapshot.fingerprint)
  const placed = placeKeyLimit(snapshot.fingerprint.number('lanes'), true, shape, 1)
  const region = snapshot.region(placed.layout)
  const table = new CountTable(region, placed.table, shape.maxKeyLength)
  const rules = readRule(new RuleBlock(region, placed.rules), KEY_LIMIT_FIELDS)
  return view('KeyConcurrencyLimiter', table, shape.maxKeys, keys, rules)
}

function view(
  component: KeyedTableView['component'],
  table: KeyedTable,
  maxKeys: number,
  keys: number,
  rules: KeyedTableView['rules'],
): KeyedTableView {
  return {
    type: 'keyed-table',
    component,
    size: table.size,
    capacity: table.capacity,
    maxKeys,
    reused: table.total('reused'),
    overflow: { admitted: table.total('overflowAdmitted'), refused: table.total('overflowRefused') },
    refused: table.total('refused'),
    longKeys: table.total('longKeys'),
    heaviest: table.heaviest(keys),
    rules,
  }
}
