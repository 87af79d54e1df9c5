/**
 * Priority classes, most important first. Pass the number (`Priority.critical`) on the hot path; names are
 * accepted too. An unknown value is treated as `normal` (the hot path never throws).
 *
 * At saturation each class may fill the host's in-flight capacity up to its share of `maxInFlight`, so lower
 * classes are shed first and `critical` keeps headroom above the estimate. Under queueing delay, each class is
 * admitted at the controller's admit fraction raised to its exponent (critical is never shed by the fraction, only by
 * the turn budget, docs/rules/bbr.md).
 */
export const Priority = { critical: 0, high: 1, normal: 2, low: 3 } as const

export type PriorityName = keyof typeof Priority
export type PriorityValue = (typeof Priority)[PriorityName]

export const PRIORITY_NAMES: readonly PriorityName[] = ['critical', 'high', 'normal', 'low']

/** Default share of maxInFlight each class may fill. */
export const DEFAULT_SHARES: Readonly<Record<PriorityName, number>> = { critical: 1.2, high: 1.1, normal: 1, low: 0.8 }

/** Admit fraction exponents under queueing delay: a^0 = 1 (never shed), a^0.5, a, a^2. */
export const DELAY_EXPONENTS: readonly number[] = [0, 0.5, 1, 2]

/** The class index for a priority argument: a number 0..3 or a class name; anything else is `normal`. */
export function priorityIndex(priority: unknown): number {
  if (typeof priority === 'number') return priority >= 0 && priority <= 3 ? priority | 0 : Priority.normal
  if (typeof priority === 'string') {
    switch (priority) {
      case 'critical':
        return Priority.critical
      case 'high':
        return Priority.high
      case 'low':
        return Priority.low
      default:
        return Priority.normal // including names inherited from Object.prototype ('constructor', 'toString')
    }
  }
  return Priority.normal
}
