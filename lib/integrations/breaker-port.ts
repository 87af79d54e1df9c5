import { BreakerGroup } from '../breakers/breaker-group'
import type { CircuitBreaker } from '../breakers/circuit-breaker'
import { SreBreaker, type SreBreakerOptions } from '../breakers/sre-breaker'
import { InvalidOptionError } from '../errors/invalid-option-error'
import { preciseNow } from '../signals/clock'
import { checkOptions } from '../validate'

/** A breaker the outbound guards drive: an SreBreaker or a CircuitBreaker. */
export type GuardBreaker = SreBreaker | CircuitBreaker

export interface BreakerChoice<B extends GuardBreaker = SreBreaker> {
  /** One breaker per key (default: a BreakerGroup of SreBreakers made with `breaker`, closed by `close()`). */
  breakers?: BreakerGroup<B>
  /** Options of each SreBreaker of the default group. */
  breaker?: SreBreakerOptions
}

/** The group to use, and whether the guard made it (and so closes it). */
export function resolveBreakers<B extends GuardBreaker>(
  o: BreakerChoice<B>,
): { group: BreakerGroup<B>; owns: boolean } {
  if (o.breakers !== undefined) {
    if (typeof (o.breakers as { get?: unknown } | null)?.get !== 'function')
      throw new InvalidOptionError('breakers', o.breakers, 'a BreakerGroup')
    if (o.breaker !== undefined) throw new InvalidOptionError('breaker', o.breaker, 'absent when `breakers` is given')
    return { group: o.breakers, owns: false }
  }
  // Checked here: an SreBreaker given something that is not an object would blame its own `options`, not `breaker`.
  const options = checkOptions<SreBreakerOptions>(o.breaker, 'breaker')
  new SreBreaker(options).close() // validates the options now, not at the first call
  const group = new BreakerGroup<SreBreaker>((_key, shared) => new SreBreaker({ ...options, shared }))
  return { group: group as unknown as BreakerGroup<B>, owns: true }
}

// Told apart by shape, not class, so that breakers from another copy of bulwark work too.
function isSre(breaker: GuardBreaker): breaker is SreBreaker {
  return typeof (breaker as SreBreaker).allow === 'function'
}

/** Asks the breaker for one call. */
export function permit(breaker: GuardBreaker): boolean {
  return isSre(breaker) ? breaker.allow() : breaker.tryAcquire()
}

/** When a call starts: a precise time only for a breaker that judges slowness, else 0 (no clock read). */
export function callStart(breaker: GuardBreaker): number {
  return isSre(breaker) || breaker.strategy !== 'slowCallRatio' ? 0 : preciseNow()
}

/** Reports how an allowed call ended. */
export function report(breaker: GuardBreaker, ok: boolean, start: number): void {
  if (isSre(breaker)) {
    if (ok) breaker.markSuccess()
    else breaker.markFailed()
    return
  }
  const duration = start === 0 ? 0 : preciseNow() - start
  if (ok) breaker.onSuccess(duration)
  else breaker.onFailure(duration)
}
