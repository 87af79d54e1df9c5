import { cell, loopCell } from '../../foundation/signals/signal-cells'
import type { LoadSignal } from '../../admission/limits/load-signal'

/** The signal 'elu' on a thread the sampler has no loop slot for: no loop is measured, so its load is 0. */
const NO_LOOP = () => 0

/**
 * Where BbrLimiter reads its load, chosen once: `fn` for a function signal (and 'elu' without a loop slot), else
 * the larger of signal cells `cellA` and `cellB` (the same cell twice for 'cpu'), so that the per-request read has
 * no switch over the signal's kind.
 */
export interface LoadSource {
  fn: (() => number) | undefined
  cellA: number
  cellB: number
}

export function loadSource(signal: LoadSignal): LoadSource {
  const elu = loopCell >= 0 ? loopCell + cell.loopElu : -1
  const cellA = signal === 'elu' ? elu : cell.cpuEma
  const cellB = signal === 'cpu' || elu < 0 ? cell.cpuEma : elu
  if (typeof signal === 'function') return { fn: signal, cellA, cellB }
  if (typeof signal === 'object') return { fn: signal.load, cellA, cellB }
  return { fn: signal === 'elu' && elu < 0 ? NO_LOOP : undefined, cellA, cellB }
}
