// Time in a rate slot (docs/rules/keyed-table.md, "Rate slots"): the debt an arrival time holds, read through its
// epoch word, and a limit counted in the table's ticks.
import { KEYED } from './keyed-table-layout'

const FRESH = KEYED.freshEpochs
const SKEW = -KEYED.epochSkew
const MAX_DEBT = KEYED.maxDebt

/** Epochs from the one an epoch word (epoch << 1 | returning) was written in to `epoch`: a 31-bit wrapping difference. */
export function epochAge(written: number, epoch: number): number {
  return ((epoch << 1) - (written & -2)) >> 1
}

/**
 * The debt (ticks) a rate slot's arrival time `tat`, with epoch word `written`, holds at `now` in `epoch`: 0 when
 * the key is at rest (its bucket full), and for a state too old to trust or that no member wrote (garbage).
 */
export function rateDebt(tat: number, written: number, now: number, epoch: number): number {
  const age = ((epoch << 1) - (written & -2)) >> 1
  if (age >= FRESH || age < SKEW) return 0
  const debt = (tat - now) | 0
  return debt > 0 && debt <= MAX_DEBT ? debt : 0
}

/** A limit in a table's ticks: a permit's interval (fractional), one permit's cost, and the burst's span. */
export interface TickLimit {
  interval: number
  one: number
  tau: number
}

/** The limit in ticks; a full bucket holds exactly floor(burst) single permits, however the ticks round. */
export function tickLimit(ticksPerMs: number, rate: number, burst: number): TickLimit {
  const interval = (ticksPerMs * 1000) / rate
  const one = Math.max(1, Math.round(interval))
  const whole = Math.floor(burst)
  const tau = Math.min(Math.max(Math.round(burst * interval), whole * one), (whole + 1) * one - 1)
  return { interval, one, tau }
}
