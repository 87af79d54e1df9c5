// What a component in shadow mode contributes to the metrics (docs/rules/shadow.md): whether it is on and what it
// would have refused, apart from the real refusals its own metrics count.
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import type { ShadowCount } from '../../foundation/live-rules/shadow-tally'
import { METRIC, type MetricSpec } from './metric-catalog'

type Emit = (spec: MetricSpec, value: number, labels: Record<string, string>) => void

/**
 * The shadow mode of component `name` of `component` family, from its rule's stats: nothing while it was never on
 * (no series for the many components that never use it).
 */
export function sampleShadow(name: string, component: string, rules: RuleStats | undefined, emit: Emit): void {
  const shadow = rules?.shadow
  if (shadow === undefined) return
  emit(METRIC.shadowEnabled, shadow.enabled ? 1 : 0, { name, component })
  for (const { reason, priority, count } of shadow.wouldRefuse) {
    const labels: Record<string, string> = { name, component, reason }
    if (priority !== undefined) labels.priority = priority
    emit(METRIC.shadowWouldRefuse, count, labels)
  }
}

/**
 * The shadow mode of a group's breakers (those sampled) as one: on when any is, their counts added up by reason;
 * undefined when none was ever in shadow mode.
 */
export function sumShadow(rules: readonly RuleStats[]): RuleStats | undefined {
  const shadows = rules.flatMap((r) => (r.shadow === undefined ? [] : [r.shadow]))
  if (shadows.length === 0) return undefined
  const counts = new Map<string, ShadowCount>()
  for (const { reason, priority, count } of shadows.flatMap((s) => s.wouldRefuse)) {
    const at = `${reason}\u0000${priority ?? ''}`
    const sum = counts.get(at)
    if (sum === undefined) counts.set(at, priority === undefined ? { reason, count } : { reason, priority, count })
    else sum.count += count
  }
  return {
    version: 0,
    values: {},
    shadow: { enabled: shadows.some((s) => s.enabled), wouldRefuse: [...counts.values()] },
  }
}
