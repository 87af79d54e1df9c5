import { InvalidOptionError } from '../errors/invalid-option-error'
import { MODE } from './switch-layout'
import { Switchboard } from './switchboard'

export type { Switchboard }

/** A breaker's `switches` option: a Switchboard, or undefined. */
export function resolveSwitches(value: unknown): Switchboard | undefined {
  if (value === undefined || value instanceof Switchboard) return value
  throw new InvalidOptionError('switches', value, 'a Switchboard')
}

/** What a switch forces a breaker named `shared` to answer: true (closed), false (open), undefined (no switch). */
export function forcedBreaker(board: Switchboard, shared: string | undefined): boolean | undefined {
  const mode = board.breakerMode(shared)
  return mode === 0 ? undefined : mode === MODE.closed
}
