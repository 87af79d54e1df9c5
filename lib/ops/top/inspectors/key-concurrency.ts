import { KEY_GAUGE_KIND, placeKeyGauge } from '../../../components/key-limits/key-gauge'
import { KEY_LIMIT_FIELDS, placeKeyLimit } from '../../../components/key-limits/key-limit-region'
import { readRule } from '../../../foundation/live-rules/live-rules'
import { RuleBlock } from '../../../foundation/live-rules/rule-block'
import { RegionLayout } from '../../../foundation/regions/region-layout'
import type { RegionSnapshot } from '../region-snapshot'
import type { KeyConcurrencyLimiterView, KeyInFlightView } from '../views'

/** A KeyConcurrencyLimiter's own region: the `max` in force (its live rule). */
export function inspectKeyLimit(snapshot: RegionSnapshot): KeyConcurrencyLimiterView {
  const { layout, rules: placement } = placeKeyLimit(snapshot.fingerprint.number('lanes'), 0)
  const rules = readRule(new RuleBlock(snapshot.region(layout), placement), KEY_LIMIT_FIELDS)
  return { type: 'key-concurrency-limiter', max: rules.values.max, rules }
}

/** One key's region of a shared KeyConcurrencyLimiter: its requests in flight across the host's members. */
export function inspectKeyGauge(snapshot: RegionSnapshot): KeyInFlightView {
  const layout = new RegionLayout(KEY_GAUGE_KIND, snapshot.fingerprint.number('lanes'))
  const placement = placeKeyGauge(layout)
  const region = snapshot.region(layout)
  const first = (region.base + placement.offset) >> 2
  const stride = placement.stride >> 2
  let inFlight = 0
  for (const slot of snapshot.liveSlots()) inFlight += region.i32[first + slot * stride]
  return { type: 'key-in-flight', inFlight }
}
