import { AbortedError } from '../errors/aborted-error'
import { InvalidArgumentError } from '../errors/invalid-argument-error'

/** The function `execute` runs: it receives the caller's AbortSignal (undefined when none was given). */
export type GuardedFunction<T> = (signal?: AbortSignal) => T | PromiseLike<T>

/** What every `execute` takes (docs/vocabulary.md): components that use more fields extend it. */
export interface ExecuteOptions {
  /** An aborted signal makes `execute` reject with AbortedError before anything is acquired; `fn` receives it. */
  signal?: AbortSignal
}

/**
 * Why `execute(fn, options)` must not start, or undefined: `fn` is not a function, the options are malformed, or
 * the signal is already aborted. Checked before anything is acquired, so that a bad call is never counted as an
 * outcome of the downstream.
 */
export function startError(fn: unknown, options: ExecuteOptions | undefined): Error | undefined {
  if (typeof fn !== 'function') return new InvalidArgumentError('fn', fn, 'a function')
  if (options === undefined) return undefined
  if (options === null || typeof options !== 'object')
    return new InvalidArgumentError('options', options, 'an object or undefined')
  const signal = options.signal
  if (signal === undefined) return undefined
  if (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean')
    return new InvalidArgumentError('options.signal', signal, 'an AbortSignal')
  return signal.aborted ? new AbortedError(signal.reason) : undefined
}

/**
 * Runs `fn(signal)` and reports how it ended to `settle(ok, arg)`. A plain (non-thenable) result is reported at
 * once and costs no extra microtask; a thrown error or a rejected promise reports a failure and is passed on
 * unchanged. `arg` is the caller's (a start time, a token) so that no closure is made per call.
 */
export function runGuarded<T>(
  fn: GuardedFunction<T>,
  signal: AbortSignal | undefined,
  settle: (ok: boolean, arg: number) => void,
  arg: number,
): Promise<T> {
  let result: T | PromiseLike<T>
  try {
    result = fn(signal)
  } catch (error) {
    settle(false, arg)
    return Promise.reject(error)
  }
  if (isThenable(result)) {
    return Promise.resolve(result).then(
      (value) => {
        settle(true, arg)
        return value
      },
      (error: unknown) => {
        settle(false, arg)
        throw error
      },
    )
  }
  settle(true, arg)
  return Promise.resolve(result)
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<T>).then === 'function'
  )
}
