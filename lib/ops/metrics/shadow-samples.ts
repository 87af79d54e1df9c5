// What a component in shadow mode contributes to the metrics (docs/rules/shadow.md): whether it is on and what it
// would have refused, apart from the real refusals its own metrics count.
import type { RuleStats } from '../../foundation/live-rules/live-rules'
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
