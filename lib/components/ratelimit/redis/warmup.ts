import type { RedisError } from '../../../foundation/errors/redis-error'
import type { Clock } from '../../../foundation/signals/clock'
import { clientFailure } from './client-failure'
import type { RedisPort } from './clients/redis-port'
import type { PendingDecision } from './pending-decision'

/**
 * A new limiter's first connection: the scripts are loaded on every primary as soon as the client can take them,
 * and decisions made before that wait for it (each within its own timeout) instead of going to insurance or
 * meeting NOSCRIPT. Once done it stays done: later reconnections and lost scripts are handled per call.
 */
export class Warmup {
  done = false
  readonly ready: Promise<void>
  private resolveReady!: () => void
  private loading = false
  private nextAttemptAt = -Infinity
  private held: PendingDecision[] = []

  constructor(
    private readonly port: RedisPort,
    private readonly scripts: readonly string[],
    /** After a failed attempt on a client that is not ready, the next one waits this long (ms). */
    private readonly retryAfter: number,
    private readonly clock: Clock,
    private readonly release: (call: PendingDecision) => void,
    private readonly onError: (error: RedisError) => void,
  ) {
    this.ready = new Promise((resolve) => (this.resolveReady = resolve))
  }

  /** Loads the scripts unless that is done, under way, or failed less than `retryAfter` ago. */
  start(): void {
    if (this.done || this.loading || this.clock() < this.nextAttemptAt) return
    this.loading = true
    let loaded: Promise<void>
    try {
      loaded = this.port.load(this.scripts)
    } catch (error) {
      loaded = Promise.reject(error)
    }
    loaded.then(
      () => this.finish(),
      (error: unknown) => {
        this.loading = false
        if (this.port.status() === 'ready') {
          // A connected client that cannot load scripts (a proxy without SCRIPT LOAD): NOSCRIPT resends them.
          this.onError(clientFailure('loading the scripts failed', error))
          this.finish()
        } else {
          this.nextAttemptAt = this.clock() + this.retryAfter
        }
      },
    )
  }

  /** Keeps `call` until the scripts are loaded (its deadline still applies). */
  hold(call: PendingDecision): void {
    if (this.held.length >= 1024) this.held = this.held.filter((c) => !c.settled)
    this.held.push(call)
    this.start()
  }

  private finish(): void {
    if (this.done) return
    this.done = true
    this.loading = false
    this.resolveReady()
    const held = this.held
    this.held = []
    for (const call of held) if (!call.settled) this.release(call)
  }
}
