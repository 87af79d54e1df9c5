import { AbortedError } from '../foundation/errors/aborted-error'
import { InvalidArgumentError } from '../foundation/errors/invalid-argument-error'

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
 * How one guarded call ended, as the two reactions a promise takes: `passed` returns the value, `failed` rethrows
 * the error, each after reporting the outcome to its component. Components make them once (per instance, or per
 * token slot) so that `execute` allocates no closure per call, and each in its own class: reactions made by one
 * shared helper share its call sites, which then see every component's methods (a polymorphic call per outcome).
 */
export interface Outcome {
  readonly passed: (value: unknown) => unknown
  readonly failed: (error: unknown) => never
}

/**
 * Runs `fn(signal)` and reports how it ended to `outcome`. A plain (non-thenable) result is reported at once and
 * costs no extra microtask; a thrown error or a rejected promise reports a failure and is passed on unchanged.
 */
export function runGuarded<T>(fn: GuardedFunction<T>, signal: AbortSignal | undefined, outcome: Outcome): Promise<T> {
  let result: T | PromiseLike<T>
  try {
    result = fn(signal)
  } catch (error) {
    return rejectAfter(outcome, error)
  }
  // A native promise first (one check): Promise.resolve would return it as it is. A foreign thenable is adopted
  // into a promise that settles once, so that the outcome is reported once.
  if (isNativePromise(result)) return result.then(outcome.passed, outcome.failed) as Promise<T>
  if (isThenable(result)) return Promise.resolve(result).then(outcome.passed, outcome.failed) as Promise<T>
  outcome.passed(result)
  return Promise.resolve(result)
}

function rejectAfter<T>(outcome: Outcome, error: unknown): Promise<T> {
  try {
    outcome.failed(error)
  } catch {
    // failed() rethrows `error` by design
  }
  return Promise.reject(error)
}

function isNativePromise<T>(value: T | PromiseLike<T>): value is Promise<T> {
  return value !== null && typeof value === 'object' && (value as object).constructor === Promise
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<T>).then === 'function'
  )
}
