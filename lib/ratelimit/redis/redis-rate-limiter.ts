import { performance } from 'perf_hooks'

import { describeValue } from '../../errors/describe-value'
import { InvalidArgumentError } from '../../errors/invalid-argument-error'
import { EventSource, type Event } from '../../events/event-source'
import { coarseNow, type Clock } from '../../signals/clock'
import type { KeyedLimiter } from '../keyed-limiter'
import type { Limiter } from '../limiter'
import { DeadlineQueue, type Deadlined } from './deadline-queue'
import { RedisCircuit, Route } from './redis-circuit'
import {
  type RedisAlgorithm,
  type RedisRateLimiterOptions,
  type RedisScriptClient,
  resolveInsurance,
  resolveRedisOptions,
} from './redis-options'
import { GCRA_SCRIPT, SLIDING_WINDOW_SCRIPT, scriptSha } from './redis-scripts'

/** One decision. Being limited is an answer, not an error. */
export interface RateLimitDecision {
  allowed: boolean
  /** Permits left for the key after this decision. */
  remaining: number
  /** When denied: ms until the permits could be there (if nobody else takes any); 0 when allowed. */
  retryAfterMs: number
  /** Who decided: Redis, or the local insurance limiter (Redis down, slow or skipped). */
  source: 'redis' | 'insurance'
}

/** Where decisions are going: 'redis', or 'insurance' while Redis is skipped after failures. */
export type RedisLimiterState = 'redis' | 'insurance'

/** A decision waiting for Redis. */
class PendingDecision implements Deadlined {
  settled = false
  /** Set after one NOSCRIPT: the retry carries the script itself. */
  resent = false

  constructor(
    readonly owner: RedisRateLimiter,
    readonly key: string,
    readonly redisKey: string,
    readonly cost: number,
    readonly probe: boolean,
    readonly deadline: number,
    readonly resolve: (decision: RateLimitDecision) => void,
  ) {}

  readonly onReply = (reply: unknown): void => this.owner.handleReply(this, reply)
  readonly onError = (error: unknown): void => this.owner.handleError(this, error)

  expire(): void {
    this.owner.handleTimeout(this)
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

/** The scripts answer { allowed, remaining, retry after µs }; anything else (a proxy, a wrong server) is an error. */
function isDecisionReply(reply: unknown): reply is [number, number, number] {
  return (
    Array.isArray(reply) &&
    reply.length >= 3 &&
    typeof reply[0] === 'number' &&
    typeof reply[1] === 'number' &&
    typeof reply[2] === 'number'
  )
}

/**
 * A rate limit for a whole fleet, kept in Redis: one round trip per decision, an atomic Lua script (called by
 * SHA, sent again in full after a NOSCRIPT) that reads the Redis server's clock, one key per limited key with the
 * key as hash tag (Redis Cluster). When Redis errs or takes longer than `timeout`, the local insurance limiter
 * decides instead, so no decision waits longer than `timeout`; after `openAfter` failures in a row Redis is
 * skipped and probed once per `probeInterval`, and decisions go back to it as soon as a probe is answered in time.
 */
export class RedisRateLimiter {
  readonly limit: number
  readonly window: number
  readonly algorithm: RedisAlgorithm
  readonly keyPrefix: string
  readonly timeout: number
  /** The local limiter that decides while Redis cannot. */
  readonly insurance: KeyedLimiter<Limiter>
  /** Fires 'insurance' when Redis starts being skipped and 'redis' when it answers again. */
  readonly onStateChange: Event<RedisLimiterState>
  /** Redis errors (other than NOSCRIPT and timeouts), after the decision they affected went to insurance. */
  readonly onError: Event<Error>
  private readonly redis: RedisScriptClient
  private readonly script: string
  private readonly sha: string
  /** ARGV[1] and ARGV[2], formatted once. */
  private readonly arg1: string
  private readonly arg2: string
  private readonly keySuffix: string
  /** The most permits one decision may ask for: the limit, or the burst for GCRA. */
  private readonly maxCost: number
  private readonly clock: Clock
  private readonly injectedNow: Clock | undefined
  private readonly circuit: RedisCircuit
  private readonly pending: DeadlineQueue<PendingDecision>
  private readonly stateEvents = new EventSource<RedisLimiterState>()
  private readonly errorEvents = new EventSource<Error>()
  private readonly counts = { redis: 0, insurance: 0, timeouts: 0, errors: 0 }

  constructor(options: RedisRateLimiterOptions) {
    const o = resolveRedisOptions(options)
    this.redis = o.redis
    this.limit = o.limit
    this.window = o.window
    this.algorithm = o.algorithm
    this.keyPrefix = o.keyPrefix
    this.timeout = o.timeout
    this.insurance = resolveInsurance((options as { insurance?: unknown }).insurance, o)
    this.injectedNow = o.now
    this.clock = o.now ?? coarseNow
    if (o.algorithm === 'gcra') {
      this.script = GCRA_SCRIPT
      this.arg1 = String(o.window / o.limit)
      this.arg2 = String(o.burst)
      this.keySuffix = '}:g'
    } else {
      this.script = SLIDING_WINDOW_SCRIPT
      this.arg1 = String(o.limit)
      this.arg2 = String(o.window)
      this.keySuffix = '}:s'
    }
    this.maxCost = o.algorithm === 'gcra' ? o.burst : o.limit
    this.sha = scriptSha(this.script)
    this.circuit = new RedisCircuit(o.openAfter, o.probeInterval, (open) =>
      this.stateEvents.emit(open ? 'insurance' : 'redis'),
    )
    // One timer tick per fifth of the timeout, and deadlines one tick early: expired within `timeout`.
    const tick = Math.max(1, Math.floor(o.timeout / 5))
    this.pending = new DeadlineQueue(Math.min(tick, o.timeout))
    this.onStateChange = this.stateEvents.event
    this.onError = this.errorEvents.event
  }

  /**
   * Decides whether `key` may take `n` permits (default 1). Resolves with the decision; rejects only for a bad
   * argument (a key that is not a string, n not in (0, limit], or (0, burst] for GCRA).
   */
  consume(key: string, n = 1): Promise<RateLimitDecision> {
    if (typeof key !== 'string') return Promise.reject(new InvalidArgumentError('key', key, 'a string'))
    if (!(typeof n === 'number' && n > 0 && n <= this.maxCost)) {
      return Promise.reject(new InvalidArgumentError('n', n, `a number > 0 and <= ${this.maxCost}`))
    }
    const route = this.clientReady() ? this.circuit.route(this.clock()) : Route.Insurance
    if (route === Route.Insurance) return Promise.resolve(this.insure(key, n))
    return new Promise((resolve) => {
      const deadline = performance.now() + this.timeout - this.pending.tick
      const call = new PendingDecision(
        this,
        key,
        this.keyPrefix + '{' + key + this.keySuffix,
        n,
        route === Route.Probe,
        deadline,
        resolve,
      )
      this.pending.push(call)
      this.send(call)
    })
  }

  /** The current route of new decisions. */
  get state(): RedisLimiterState {
    return this.circuit.open ? 'insurance' : 'redis'
  }

  /** Decisions made by Redis and by the insurance limiter, and the Redis timeouts and errors seen. */
  stats(): { redis: number; insurance: number; timeouts: number; errors: number; pending: number } {
    return { ...this.counts, pending: this.pending.pending }
  }

  /** Settles pending decisions through the insurance limiter. The Redis client is yours: it stays open. */
  close(): void {
    this.pending.expireAll()
  }

  /** @internal */
  handleReply(call: PendingDecision, reply: unknown): void {
    if (call.settled) return // too late: the insurance limiter already decided
    if (!isDecisionReply(reply))
      return this.handleError(call, new Error(`unexpected reply from the rate-limit script: ${describeValue(reply)}`))
    call.settled = true
    this.circuit.succeeded(call.probe)
    this.counts.redis++
    this.pending.trim()
    const r = reply as [number, number, number]
    // Clamped: the scripts never answer a negative count or wait, but a server in front of them (a proxy) might.
    call.resolve({
      allowed: r[0] === 1,
      remaining: r[1] > 0 ? r[1] : 0,
      retryAfterMs: r[2] > 0 ? r[2] / 1000 : 0,
      source: 'redis',
    })
  }

  /** @internal */
  handleError(call: PendingDecision, error: unknown): void {
    if (call.settled) return
    if (isNoScript(error) && !call.resent) {
      // The server lost its scripts (restart, SCRIPT FLUSH, failover): EVAL sends the script and caches it again.
      call.resent = true
      try {
        this.redis
          .eval(this.script, 1, call.redisKey, this.arg1, this.arg2, call.cost, this.nowArg())
          .then(call.onReply, call.onError)
      } catch (thrown) {
        this.handleError(call, thrown) // a client that throws instead of rejecting
      }
      return
    }
    this.counts.errors++
    this.fail(call)
    // describeValue, not String(): String() of an object without a prototype throws.
    this.errorEvents.emit(
      error instanceof Error ? error : new Error(`the Redis client failed with ${describeValue(error)}`),
    )
  }

  /** @internal */
  handleTimeout(call: PendingDecision): void {
    this.counts.timeouts++
    this.fail(call)
  }

  private fail(call: PendingDecision): void {
    call.settled = true
    this.pending.trim()
    this.circuit.failed(call.probe, this.clock())
    call.resolve(this.insure(call.key, call.cost))
  }

  private send(call: PendingDecision): void {
    try {
      this.redis
        .evalsha(this.sha, 1, call.redisKey, this.arg1, this.arg2, call.cost, this.nowArg())
        .then(call.onReply, call.onError)
    } catch (error) {
      call.onError(error) // a client that throws instead of rejecting
    }
  }

  private nowArg(): string {
    return this.injectedNow === undefined ? '' : String(this.injectedNow())
  }

  private clientReady(): boolean {
    const status = this.redis.status
    return status === undefined || status === 'ready' || status === 'wait'
  }

  private insure(key: string, n: number): RateLimitDecision {
    this.counts.insurance++
    const limiter = this.insurance.get(key)
    const allowed = limiter.tryAcquire(n)
    return {
      allowed,
      remaining: Math.floor(limiter.available()),
      retryAfterMs: allowed ? 0 : limiter.retryAfterMs(n),
      source: 'insurance',
    }
  }
}
