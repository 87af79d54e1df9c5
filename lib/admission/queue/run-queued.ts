import { AbortedError } from '../../foundation/errors/aborted-error'
import { OverloadError } from '../../foundation/errors/overload-error'
import type { Waiter } from './admission-queue'
import { shedReason, type ShedReason } from '../../foundation/errors/shed'
import { type GuardedFunction, type Outcome, runGuarded } from '../run-guarded'

/**
 * Runs `fn` once the queue admits it (docs/rules/queue.md): `wait(done)` queues the refused request (undefined when
 * the queue is full: it is shed with its own `code`). A shed rejects with OverloadError (Shed.queueTimeout: it
 * waited its deadline out); an abort while waiting frees its place and rejects with AbortedError.
 */
export function runQueued<T>(
  wait: (done: (token: number) => void) => Waiter | undefined,
  code: number,
  fn: GuardedFunction<T>,
  signal: AbortSignal | undefined,
  outcomeOf: (token: number) => Outcome,
  retryAfter: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const aborted = (): void => {
      if (waiter?.cancel() === true) reject(new AbortedError(signal?.reason))
    }
    const waiter = wait((token) => {
      signal?.removeEventListener('abort', aborted)
      if (token < 0) reject(new OverloadError(shedReason(token) as ShedReason, retryAfter))
      else resolve(runGuarded(fn, signal, outcomeOf(token)))
    })
    if (waiter === undefined) return reject(new OverloadError(shedReason(code) as ShedReason, retryAfter))
    signal?.addEventListener('abort', aborted, { once: true })
  })
}
