import type { Breaker } from '../../components/breakers/breaker'
import { BreakerGroup } from '../../components/breakers/breaker-group'
import { SreBreaker, type SreBreakerOptions } from '../../components/breakers/sre-breaker'
import { BreakerOpenError } from '../../foundation/errors/breaker-open-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { preciseNow } from '../../foundation/signals/clock'
import { forcedOpen, type Switchboard } from '../../components/switches/breaker-switch'
import { checkOptions } from '../../foundation/common/validate'

export interface BreakerChoice<B extends Breaker = SreBreaker> {
  /** One breaker per key (default: a BreakerGroup of SreBreakers made with `breaker`, closed by `close()`). */
  breakers?: BreakerGroup<B>
  /** Options of each SreBreaker of the default group. */
  breaker?: SreBreakerOptions
  /**
   * Operators' switches for the default group (docs/guide/degrade.md, "Manual switches"): `breaker:<switchName>`
   * forces every key's breaker open or closed, `breaker:<switchName>/<key>` one key's (with `breakers`, give your
   * group `switches` instead).
   */
  switches?: Switchboard
  /** The name switches address the default group by (default 'undici' or 'grpc'; characters A-Z a-z 0-9 . _ -). */
  switchName?: string
}

/** The group to use, and whether the guard made it (and so closes it). */
export function resolveBreakers<B extends Breaker>(
  o: BreakerChoice<B>,
  guardName: string,
): { group: BreakerGroup<B>; owns: boolean } {
  if (o.breakers !== undefined) {
    for (const field of ['switches', 'switchName'] as const)
      if (o[field] !== undefined)
        throw new InvalidOptionError(field, o[field], 'absent when `breakers` is given (set it on your BreakerGroup)')
    if (typeof (o.breakers as { get?: unknown } | null)?.get !== 'function')
      throw new InvalidOptionError('breakers', o.breakers, 'a BreakerGroup')
    if (o.breaker !== undefined) throw new InvalidOptionError('breaker', o.breaker, 'absent when `breakers` is given')
    return { group: o.breakers, owns: false }
  }
  // Checked here: an SreBreaker given something that is not an object would blame its own `options`, not `breaker`.
  const options = checkOptions<SreBreakerOptions>(o.breaker, 'breaker')
  new SreBreaker(options).close() // validates the options now, not at the first call
  const switches = o.switches === undefined ? {} : { switches: o.switches, name: o.switchName ?? guardName }
  const group = new BreakerGroup<SreBreaker>((_key, shared) => new SreBreaker({ ...options, shared }), switches)
  return { group: group as unknown as BreakerGroup<B>, owns: true }
}

/**
 * Stands for the breaker of a key its group had no room for (every breaker the group looked at is open): it refuses
 * every call, as an open breaker would, so that the key's calls wait for the group to have room.
 */
export const noRoomBreaker: Breaker = {
  shared: undefined,
  state: 'open',
  usesDuration: false,
  tryAcquire: () => false,
  recordSuccess: () => undefined,
  recordFailure: () => undefined,
  execute: () => Promise.reject(new BreakerOpenError(undefined)),
  close: () => undefined,
}

/** The refusal of a breaker that refused a call: BreakerOpenError, `forced` when an operator's switch did it. */
export function breakerOpenError(breaker: Breaker, name: string): BreakerOpenError {
  return new BreakerOpenError(breaker.shared ?? name, 0, forcedOpen(breaker))
}

/** When a call starts: a precise time only for a breaker that judges durations, else 0 (no clock read). */
export function callStart(breaker: Breaker): number {
  return breaker.usesDuration ? preciseNow() : 0
}

/** Records how a permitted call ended. */
export function report(breaker: Breaker, ok: boolean, start: number): void {
  const duration = start === 0 ? undefined : preciseNow() - start
  if (ok) breaker.recordSuccess(duration)
  else breaker.recordFailure(duration)
}
