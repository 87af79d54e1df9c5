import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { MODE } from './switch-layout'
import { Switchboard } from './switchboard'

export type { Switchboard }

/** A breaker's `switches` option: a Switchboard, or undefined. */
export function resolveSwitches(value: unknown): Switchboard | undefined {
  if (value === undefined || value instanceof Switchboard) return value
  throw new InvalidOptionError('switches', value, 'a Switchboard')
}

/**
 * The switches one breaker obeys (docs/guide/degrade.md, "Manual switches"): `breaker:<its shared name>` on its own
 * board, and for a member of a BreakerGroup given `switches`, `breaker:<group>/<key>` then `breaker:<group>` on the
 * group's. Asked on every call: one atomic load per board, and map lookups only while a board holds a breaker switch.
 */
export class BreakerSwitch {
  private readonly board: Switchboard | undefined
  private readonly shared: string | undefined
  private groupBoard: Switchboard | undefined = undefined
  private group = ''
  private key = ''

  constructor(board: Switchboard | undefined, shared: string | undefined) {
    this.board = board
    this.shared = shared
  }

  /** Also obeys `board`'s switches on `group` and on its `key`. */
  joinGroup(board: Switchboard, group: string, key: string): this {
    this.groupBoard = board
    this.group = group
    this.key = key
    return this
  }

  /** What a switch forces the breaker to answer: true (closed), false (open), undefined (no switch). */
  forced(): boolean | undefined {
    let mode = this.board === undefined ? 0 : this.board.breakerMode(this.shared)
    const groupBoard = this.groupBoard
    if (mode === 0 && groupBoard !== undefined) {
      groupBoard.refresh()
      mode = groupBoard.groupMode(this.group, this.key)
    }
    return mode === 0 ? undefined : mode === MODE.closed
  }
}

/** A breaker that obeys switches (SreBreaker, CircuitBreaker): its BreakerGroup can make it obey the group's. */
export interface SwitchedBreaker {
  shared: string | undefined
  switch: BreakerSwitch | undefined
}

/**
 * The breakers that obey switches, as their constructors registered them: a breaker an application wrote (any
 * object with the Breaker methods) may have a `switch` field of its own, which is not ours to read or replace.
 */
const switchedBreakers = new WeakSet<object>()

/** Registers `breaker` as one that obeys switches (from the constructors of SreBreaker and CircuitBreaker). */
export function obeysSwitches(breaker: SwitchedBreaker): void {
  switchedBreakers.add(breaker)
}

/** Makes `breaker` (the group's breaker of `key`) obey `board`'s switches on the group; a breaker of another kind is left alone. */
export function joinGroupSwitches(breaker: object, board: Switchboard, group: string, key: string): void {
  if (!switchedBreakers.has(breaker)) return
  const b = breaker as SwitchedBreaker
  b.switch = (b.switch ?? new BreakerSwitch(undefined, b.shared)).joinGroup(board, group, key)
}

/** Whether an operator's switch forces `breaker` open now (false for a breaker that takes no switches). */
export function forcedOpen(breaker: object): boolean {
  return switchedBreakers.has(breaker) && (breaker as SwitchedBreaker).switch?.forced() === false
}
