import { performance } from 'perf_hooks'

import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import type { RedisError } from '../../../foundation/errors/redis-error'
import { EventSource, type Event } from '../../../foundation/common/event-source'
import type { LiveRules, RuleStats } from '../../../foundation/live-rules/live-rules'
import type { RedisLimiterState, RedisRateLimiterStats } from './redis-stats'
import type { SharedRegion } from '../../../foundation/regions/shared-region'
import { coarseNow, type Clock } from '../../../foundation/signals/clock'
import type { KeyedLimiter } from '../keyed-limiter'
import type { Limiter } from '../limiter'
import type { RedisPort } from './clients/redis-port'
import { toRedisPort } from './clients/to-redis-port'
import { DeadlineQueue } from './deadline-queue'
import { LocalRefusals } from './local-refusals'
import { PendingDecision, type RateLimitDecision } from './pending-decision'
import { RedisCircuit, Route } from './redis-circuit'
import { RedisKeys, boundedKey, limitDefinition } from './redis-keys'
import {
  type RedisAlgorithm,
  type RedisRateLimiterOptions,
  type RedisRateLimiterRule,
  type ResolvedRedisOptions,
  resolveRedisOptions,
} from './redis-options'
import { RedisInsurance } from './redis-insurance'
import { openRedisRule, scriptMaxWaitUs, scriptParams } from './redis-rule'
import { GCRA_SCRIPT, SLIDING_WINDOW_SCRIPT, scriptSha } from './redis-scripts'
import { ScriptBatcher } from './script-batcher'
import { Warmup } from './warmup'
import { registerComponent } from '../../../foundation/common/component-registry'
import type { AcquireOptions } from '../waiting/acquire-options'
import type { Reservation } from '../waiting/reservation'
import { RedisWaiting } from './redis-waiting'
import { adjusterFor } from './redis-adjust'

export type { RateLimitDecision } from './pending-decision'
export type { RedisLimiterState, RedisRateLimiterStats } from './redis-stats'

const SCRIPTS = [SLIDING_WINDOW_SCRIPT, GCRA_SCRIPT]

/**
 * A rate limit for a whole fleet, kept in Redis (docs/readme/ratelimit.md, "Redis: the fleet tier"). Decisions made
 * together go to Redis together: one script call per event-loop turn (per hash slot on a cluster), atomic, on the
 * server's clock, each key read and written once. A key Redis refused or emptied stays refused here for the wait Redis
 * gave. When Redis errs, is not ready or takes longer than `timeout`, the local insurance limiter decides, so no
 * decision waits longer than `timeout`; after `openAfter` failures in a row Redis is skipped and probed once per
 * `probeInterval`, and decisions go back to it as soon as a probe is answered in time.
 */
export class RedisRateLimiter {
  // The DecisionOwner and BatchSink of its decisions and batches (interfaces checked where it hands itself over).
  readonly algorithm: RedisAlgorithm
  readonly keyPrefix: string
  readonly timeout: number
  /** Fires 'insurance' when Redis starts being skipped and 'redis' when it answers again. */
  readonly onStateChange: Event<RedisLimiterState>
  /**
   * Redis errors (other than NOSCRIPT and timeouts), after the decisions they affected went to insurance: a
   * RedisError (`ERR_BULWARK_REDIS`), the client's own error as its `cause`.
   */
  readonly onError: Event<RedisError>
  /** The live rule's name, or undefined when the rule is this limiter's own. */
  readonly shared: string | undefined
  private readonly port: RedisPort
  private keys: RedisKeys
  /** The most permits one decision may ask for: the limit, or the burst for GCRA. */
  private maxCost: number
  /** The longest wait the script can answer, µs: a reply's wait is clamped to it (docs/guide/trust.md). */
  private maxWaitUs: number
  private options: ResolvedRedisOptions
  private readonly insuranceLimiter: RedisInsurance
  private readonly region: SharedRegion
  private readonly rules: LiveRules
  private readonly clock: Clock
  /** Local refusals are timed precisely (or on the injected clock, which then is Redis' clock too). */
  private readonly refusalClock: Clock
  private readonly circuit: RedisCircuit
  private readonly pending: DeadlineQueue<PendingDecision>
  private readonly batcher: ScriptBatcher
  private readonly warmup: Warmup
  private readonly refusals: LocalRefusals | undefined
  private readonly stateEvents = new EventSource<RedisLimiterState>()
  private readonly errorEvents = new EventSource<RedisError>()
  private readonly counts = { redis: 0, local: 0, insurance: 0, timeouts: 0, errors: 0, notReady: 0 }
  private closed = false
  private readonly waiting: RedisWaiting

  constructor(options: RedisRateLimiterOptions) {
    const o = resolveRedisOptions(options)
    this.port = toRedisPort(o.redis)
    this.options = o
    this.algorithm = o.algorithm
    this.keyPrefix = o.keyPrefix
    this.timeout = o.timeout
    this.insuranceLimiter = new RedisInsurance((options as { insurance?: unknown }).insurance, o)
    this.clock = o.now ?? coarseNow
    this.refusalClock = o.now ?? (() => performance.now())
    this.refusals = o.localRefusal ? new LocalRefusals() : undefined
    this.keys = new RedisKeys(o.keyPrefix, limitDefinition(o.algorithm, o.limit, o.window, o.burst))
    const gcra = o.algorithm === 'gcra'
    this.maxCost = gcra ? o.burst : o.limit
    this.maxWaitUs = scriptMaxWaitUs(o)
    const script = gcra ? GCRA_SCRIPT : SLIDING_WINDOW_SCRIPT
    const injected = o.now
    const timeArg = injected === undefined ? () => '' : () => String(injected())
    const sha = scriptSha(script)
    this.batcher = new ScriptBatcher(this.port, script, sha, scriptParams(o), timeArg, this.refusalClock, this)
    this.shared = o.sharing.shared
    const initial = gcra ? [o.limit, o.window, o.burst] : [o.limit, o.window]
    ;({ region: this.region, rules: this.rules } = openRedisRule(o.sharing, o.algorithm, initial, o.hosts, (v) =>
      this.obeyRule(v[0], v[1], gcra ? v[2] : v[0]),
    ))
    this.circuit = new RedisCircuit(o.openAfter, o.probeInterval, (open) =>
      this.stateEvents.emit(open ? 'insurance' : 'redis'),
    )
    // One timer tick per fifth of the timeout, and deadlines one tick early: expired within `timeout`.
    const tick = Math.max(1, Math.floor(o.timeout / 5))
    this.pending = new DeadlineQueue(Math.min(tick, o.timeout))
    this.onStateChange = this.stateEvents.event
    this.onError = this.errorEvents.event
    // Connect and load the scripts now, so that the first decisions find them (both scripts: one SCRIPT LOAD each).
    this.warmup = new Warmup(
      this.port,
      SCRIPTS,
      o.timeout,
      this.clock,
      (call) => this.batcher.add(call),
      (error) => this.errorEvents.emit(error),
    )
    this.warmup.start()
    const current = () => this.options // a live rule replaces them (obeyRule)
    const adjustKey = adjusterFor(
      this.port,
      current,
      timeArg,
      (key) => this.keys.of(key, boundedKey(key)),
      this.errorEvents,
    )
    const maxCost = () => this.maxCost
    this.waiting = new RedisWaiting(
      {
        consume: (key, n) => this.consume(key, n),
        adjustKey,
        get maxCost() {
          return maxCost()
        },
      },
      this.refusalClock,
      o.maxQueue,
      o.pollInterval,
    )
  }

  /**
   * Takes `n` permits of `key` for the fleet, waiting for them (AcquireOptions: maxWait, priority, signal): the
   * callers of each key wait in one queue per process, whose head asks Redis and waits what Redis answers.
   */
  acquire(key: string, n = 1, options?: AcquireOptions): Promise<void> {
    return this.waiting.acquire(key, n, options, false) as Promise<void>
  }

  /** Takes an estimate of `n` permits as acquire does; the Reservation settles the real cost in Redis. */
  reserve(key: string, n: number, options?: AcquireOptions): Promise<Reservation> {
    return this.waiting.acquire(key, n, options, true) as Promise<Reservation>
  }

  /**
   * Decides whether `key` may take `n` permits (default 1). Resolves with the decision; rejects only for a bad
   * argument (a key that is not a string, n not in (0, limit], or (0, burst] for GCRA).
   */
  consume(key: string, n = 1): Promise<RateLimitDecision> {
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    if (typeof key !== 'string') return Promise.reject(new InvalidArgumentError('key', key, 'a string'))
    if (!(typeof n === 'number' && n > 0 && n <= this.maxCost)) {
      return Promise.reject(new InvalidArgumentError('n', n, `a number > 0 and <= ${this.maxCost}`))
    }
    const bounded = boundedKey(key)
    const redisKey = this.keys.of(key, bounded)
    const refusals = this.refusals
    if (refusals !== undefined && refusals.size > 0) {
      const wait = refusals.waitMs(redisKey, n, this.refusalClock())
      if (wait > 0) {
        this.counts.local++
        return Promise.resolve(this.verdict({ allowed: false, remaining: 0, retryAfterMs: wait, source: 'local' }))
      }
    }
    const now = this.clock()
    const route = this.closed ? Route.Insurance : this.circuit.route(now)
    if (route === Route.Insurance) return Promise.resolve(this.insure(bounded, n))
    const probe = route === Route.Probe
    const status = this.port.status()
    // Not ready counts as a failure (it opens the circuit), except while a new client makes its first connection:
    // then decisions wait for it, within their timeout.
    if (status !== 'ready' && (status === 'down' || this.warmup.done)) {
      this.counts.notReady++
      this.circuit.failed(probe, now)
      return Promise.resolve(this.insure(bounded, n))
    }
    return new Promise((resolve) => {
      const deadline = performance.now() + this.timeout - this.pending.tick
      const costArg = n === 1 ? '1' : String(n)
      const call = new PendingDecision(this, bounded, redisKey, n, costArg, probe, deadline, resolve)
      this.pending.push(call)
      if (this.warmup.done) this.batcher.add(call)
      else this.warmup.hold(call)
    })
  }

  /**
   * Resolves once the client is connected and the scripts are loaded on every primary: decisions made from then on
   * go straight to Redis. Decisions made before wait for it (within `timeout`), so awaiting this is optional.
   */
  ready(): Promise<void> {
    return this.warmup.ready
  }

  /** Permits per window, for the whole fleet (the live rule's, once changed; reading it applies nothing). */
  get limit(): number {
    return this.rules.pending()?.[0] ?? this.options.limit
  }
  /** Window length, ms (the live rule's, once changed; reading it applies nothing). */
  get window(): number {
    return this.rules.pending()?.[1] ?? this.options.window
  }
  /** The local limiter that decides while Redis cannot (made again from each new rule unless it is yours). */
  get insurance(): KeyedLimiter<Limiter> {
    return this.insuranceLimiter.limiter
  }
  /** Told each live rule this limiter starts to obey, at its first decision after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes the limit, window and (GCRA) burst for every limiter sharing the rule (docs/rules/live-rules.md),
   * validated as the constructor validates them, refused whole (InvalidOptionError) when a field is bad. Keys name
   * their limit: each key's count starts afresh under the new rule; decisions already sent keep theirs.
   */
  configure(rule: RedisRateLimiterRule): RuleStats {
    return this.rules.configure(rule)
  }

  /** The current route of new decisions. */
  get state(): RedisLimiterState {
    return this.circuit.open ? 'insurance' : 'redis'
  }

  stats(): RedisRateLimiterStats {
    return {
      state: this.state,
      ...this.counts,
      calls: this.batcher.calls,
      pending: this.pending.pending,
      refusedKeys: this.refusals?.size ?? 0,
      rules: this.rules.stats(),
    }
  }

  /**
   * Settles pending decisions through the insurance limiter; decisions from now on are the insurance limiter's.
   * The Redis client is yours: it stays open. Idempotent.
   */
  close(): void {
    this.closed = true
    this.waiting.close()
    this.pending.expireAll()
    this.refusals?.clear()
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** @internal */
  decided(call: PendingDecision, remaining: number, waitUs: number, sentAt: number): void {
    if (call.settled) return // too late: the insurance limiter already decided
    call.settled = true
    this.circuit.succeeded(call.probe)
    this.counts.redis++
    // waitUs: 0 admitted; < 0 admitted, and the key is empty for -waitUs; > 0 refused for waitUs (redis-scripts.ts).
    // Clamped to what the script can answer: a reply that says 2^53 µs must not refuse a key here for decades.
    const max = this.maxWaitUs
    const wait = waitUs > max ? max : waitUs < -max ? -max : waitUs
    const allowed = wait <= 0
    const retryAfterMs = allowed ? 0 : wait / 1000
    const refusals = this.refusals
    if (refusals !== undefined && wait !== 0) {
      // An empty key refuses any request until its next permit; a refused one, requests as large as this one.
      if (allowed) refusals.refuse(call.redisKey, 1, sentAt, -wait / 1000)
      else refusals.refuse(call.redisKey, call.cost, sentAt, retryAfterMs)
    }
    // Clamped: the scripts never answer a negative count, or more than the limit, but a proxy in front of them might.
    const left = remaining > 0 ? (remaining < this.maxCost ? remaining : this.maxCost) : 0
    call.resolve(this.verdict({ allowed, remaining: left, retryAfterMs, source: 'redis' }))
  }

  /** @internal */
  answered(): void {
    this.pending.trim()
  }

  /** @internal */
  failed(calls: readonly PendingDecision[], error: RedisError): void {
    let affected = 0
    for (const call of calls) {
      if (call.settled) continue
      affected++
      this.counts.errors++
      this.fail(call)
    }
    if (affected > 0) this.errorEvents.emit(error)
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

  /** Takes a new rule: keys, the scripts' parameters, the largest cost and the default insurance limiter. */
  private obeyRule(limit: number, window: number, burst: number): void {
    const o = { ...this.options, limit, window, burst }
    this.options = o
    this.keys = new RedisKeys(o.keyPrefix, limitDefinition(o.algorithm, limit, window, burst))
    this.maxCost = o.algorithm === 'gcra' ? burst : limit
    this.maxWaitUs = scriptMaxWaitUs(o)
    this.batcher.setParams(scriptParams(o))
    this.refusals?.clear() // refusals were timed by the old rule
    this.insuranceLimiter.renew(o)
  }

  private insure(key: string, n: number): RateLimitDecision {
    this.counts.insurance++
    return this.verdict(this.insuranceLimiter.decide(key, n))
  }

  /** A decision as returned: a refusal in shadow mode (docs/rules/shadow.md) counted and admitted. */
  private verdict(decision: RateLimitDecision): RateLimitDecision {
    if (decision.allowed || !this.rules.shadowAdmits(0)) return decision
    return { ...decision, allowed: true, retryAfterMs: 0 }
  }
}
registerComponent('RedisRateLimiter', RedisRateLimiter)
