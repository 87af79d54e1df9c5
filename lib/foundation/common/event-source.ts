import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { type Disposable, toDisposable } from './disposable'

/** Subscribes a listener; the returned Disposable unsubscribes it. */
export type Event<T> = (listener: (value: T) => void) => Disposable

/**
 * The producing side of an event. A listener that throws does not stop the others, and never reaches the code that
 * emitted (a breaker's state change must not fail the call that caused it); the error is reported on
 * process 'uncaughtException' through queueMicrotask, as an unhandled listener error would be.
 */
export class EventSource<T> {
  private listeners: Array<(value: T) => void> = []

  readonly event: Event<T> = (listener) => {
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', listener, 'a function')
    this.listeners = [...this.listeners, listener]
    return toDisposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener)
    })
  }

  get hasListeners(): boolean {
    return this.listeners.length > 0
  }

  emit(value: T): void {
    for (const listener of this.listeners) {
      try {
        listener(value)
      } catch (error) {
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
}
