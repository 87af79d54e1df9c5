import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { checkOptions, optionalNumber } from './validate'

export interface CoalescerOptions {
  /** Keys with a call in flight at once (default 10 000): past it, calls run on their own, not shared. */
  maxKeys?: number
}

export interface CoalescerStats {
  /** Calls run (each one upstream call). */
  calls: number
  /** Callers that joined a call already in flight instead of making their own. */
  joined: number
  /** Keys with a call in flight now. */
  inFlight: number
  /** Calls made on their own because `maxKeys` keys were in flight. */
  overflow: number
}

/**
 * One call for many identical concurrent requests (docs/guide/integrations.md, "Coalescing"): the first caller of
 * a key runs the function, the callers that come while it is in flight get its result (or its error). Nothing is
 * kept once it settles: this is not a cache, only a meeting point, so a hot key's expiry sends one call to the
 * origin, not one per waiting request.
 */
export class Coalescer<T = unknown> {
  readonly maxKeys: number
  private readonly inFlight = new Map<string, Promise<T>>()
  private readonly counts = { calls: 0, joined: 0, overflow: 0 }

  constructor(options?: CoalescerOptions) {
    const o = checkOptions<CoalescerOptions>(options, 'options')
    this.maxKeys = optionalNumber('maxKeys', o.maxKeys, 10_000, { integer: true, min: 1, max: 2 ** 30 })
  }

  /** The in-flight call of `key`, or `fn()` as the call every other caller of `key` joins until it settles. */
  run(key: string, fn: () => Promise<T>): Promise<T> {
    if (typeof key !== 'string') return Promise.reject(new InvalidArgumentError('key', key, 'a string'))
    const running = this.inFlight.get(key)
    if (running !== undefined) {
      this.counts.joined++
      return running
    }
    this.counts.calls++
    let call: Promise<T>
    try {
      call = Promise.resolve(fn())
    } catch (error) {
      return Promise.reject(error)
    }
    if (this.inFlight.size >= this.maxKeys) {
      this.counts.overflow++
      return call
    }
    const shared = call.finally(() => {
      if (this.inFlight.get(key) === shared) this.inFlight.delete(key)
    })
    this.inFlight.set(key, shared)
    return shared
  }

  /** Whether a call of `key` is in flight. */
  has(key: string): boolean {
    return this.inFlight.has(key)
  }

  stats(): CoalescerStats {
    return { ...this.counts, inFlight: this.inFlight.size }
  }
}
