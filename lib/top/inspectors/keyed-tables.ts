import { RateTable } from '../../foundation/keyed-table/rate-table'
import { keyedLimiterLayout, keyedLimiterShape, placeKeyedLimiter } from '../../ratelimit/keyed-rate-limits'
import { readRule } from '../../rules/live-rules'
import { RuleBlock } from '../../rules/rule-block'
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
  return {
    type: 'keyed-table',
    component: 'KeyedLimiter',
    size: table.size,
    capacity: table.capacity,
    maxKeys: shape.maxKeys,
    reused: table.total('reused'),
    overflow: { admitted: table.total('overflowAdmitted'), refused: table.total('overflowRefused') },
    refused: table.total('refused'),
    longKeys: table.total('longKeys'),
    heaviest: table.heaviest(keys),
    rules: readRule(new RuleBlock(region, placed.rules), ['rate', 'burst']),
  }
}
