import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import { type LatencyOptions, resolveLatencyOptions } from '../../admission/limits/latency-options'
import { type AdmissionQueueOptions, resolveQueueOptions } from '../../admission/queue/queue-options'
import { type FairnessOptions, resolveFairness, type ResolvedFairness } from '../../admission/queue/fair-share'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import type { ExecuteOptions } from '../../admission/run-guarded'
import { coarseNow } from '../../foundation/signals/clock'
import { checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import { DEFAULT_SHARES, PRIORITY_NAMES, type PriorityName } from '../../admission/priority'
import type { QueueDelayOptions } from '../../admission/limits/queue-delay-controller'
import { type MemoryOptions, type ResolvedMemoryOptions, resolveMemoryOptions } from './memory-options'
import type { LoadSignal } from '../../admission/limits/load-signal'

/** What BbrLimiter.execute takes: the caller's signal and the request's priority class. */
export interface PriorityExecuteOptions extends ExecuteOptions {
  /** The request's priority class (default normal). */
  priority?: number | PriorityName
  /** The request's key for fair shedding (with the `fairness` option). */
  key?: string
}

export interface BbrLimiterOptions extends SharingOptions {
  /** Length of the rolling windows of passes and response times, ms (default 10 000). */
  window?: number
  /** Buckets per window (default 100); `window` must be a multiple of it. */
  buckets?: number
  /** Load in permille at or above which the in-flight check applies (default 800, 1..1000). */
  cpuThreshold?: number
  /** After a drop, keep applying the in-flight check for this long even below the threshold, ms (default 1000). */
  cooldown?: number
  /** Floor on maxInFlight so a fresh or long-idle limiter does not shed everything (default 20). */
  minInFlight?: number
  /** Load signal (default 'max': the larger of container CPU and this thread's event-loop utilization). */
  signal?: LoadSignal
  /** Shed on queueing delay (CoDel-style); false turns the check off. Default { target: 10, interval: 100 }. */
  queueDelay?: Partial<QueueDelayOptions> | false
  /**
   * Memory as a load signal (docs/rules/bbr.md, "Memory"): while the heap, the RSS, the container's memory or the
   * time paused in GC is at or over its threshold, the limiter sheds as it does at a load over `cpuThreshold`.
   * Default off.
   */
  memory?: MemoryOptions | false
  /**
   * Shed when requests in flight pass the limit learned from latency (the adaptive concurrency check, for
   * gateways that wait on an upstream; docs/rules/latency.md); false turns the rule off.
   */
  latency?: Partial<LatencyOptions> | false
  /**
   * Shed the requests of keys that take more than their fair share first (the key is tryAcquire's second
   * argument; docs/rules/fairness.md). Default off: keys are ignored.
   */
  fairness?: boolean | FairnessOptions
  /**
   * A request refused by the rules may wait this long for a slot, ms (docs/rules/queue.md): execute() and the
   * inbound guards queue it. Default 0: no queue, refused at once.
   */
  maxWait?: number
  /** The most requests waiting at once, per process (default 128; only with maxWait). */
  maxQueue?: number
  /** Share of maxInFlight each priority class may fill (defaults: critical 1.2, high 1.1, normal 1, low 0.8). */
  priorities?: Partial<Record<PriorityName, number>>
  /**
   * Measure the response time of one request in this many (a power of two). Default: as few as still give about
   * 64 response times per bucket at the current traffic (every request when quiet, at most one in 1024); 1 with
   * `now`.
   */
  rtSampling?: number
}

export interface ResolvedBbrOptions {
  window: number
  buckets: number
  bucketMs: number
  cpuThreshold: number
  cooldown: number
  minInFlight: number
  signal: LoadSignal
  queueDelay: QueueDelayOptions | false
  /** Memory thresholds (docs/rules/bbr.md, "Memory"); undefined: memory is not watched. */
  memory: ResolvedMemoryOptions | undefined
  latency: LatencyOptions | false
  fairness: ResolvedFairness | undefined
  queue: AdmissionQueueOptions | undefined
  shares: Float64Array
  shared: string | undefined
  /** The application namespace of `shared` (docs/guide/trust.md); undefined when not shared. */
  namespace: string | undefined
  maxMembers: number
  rtSampling: number
  /** rtSampling was not given and the clock is the limiter's own: the sampling follows the traffic. */
  rtSamplingAuto: boolean
  now: (() => number) | undefined
}

function resolveSignal(value: unknown): LoadSignal {
  if (value === undefined) return 'max'
  if (value === 'max' || value === 'cpu' || value === 'elu' || typeof value === 'function') return value as LoadSignal
  if (value !== null && typeof value === 'object' && typeof (value as { load?: unknown }).load === 'function') {
    optionalFunction('signal.delay', (value as { delay?: unknown }).delay)
    optionalFunction('signal.turnAge', (value as { turnAge?: unknown }).turnAge)
    return value as LoadSignal
  }
  throw new InvalidOptionError(
    'signal',
    value,
    "'max', 'cpu', 'elu', a function returning permille, or { load, delay?, turnAge? }",
  )
}

function resolveQueueDelay(value: unknown): QueueDelayOptions | false {
  if (value === false) return false
  const o = checkOptions<QueueDelayOptions>(value, 'queueDelay')
  return {
    target: optionalNumber('queueDelay.target', o.target, 10, { above: 0, max: 60_000 }),
    interval: optionalNumber('queueDelay.interval', o.interval, 100, { min: 0, max: 60_000 }),
  }
}

/** Validates the share of a limit each priority class may fill. */
export function resolveShares(value: unknown): Float64Array {
  const o = checkOptions<Record<PriorityName, number>>(value, 'priorities')
  for (const key of Object.keys(o)) {
    if (!PRIORITY_NAMES.includes(key as PriorityName)) {
      throw new InvalidOptionError(
        `priorities.${key}`,
        o[key as PriorityName],
        `a share for one of ${PRIORITY_NAMES.join(', ')}`,
      )
    }
  }
  return new Float64Array(
    PRIORITY_NAMES.map((name) =>
      optionalNumber(`priorities.${name}`, o[name], DEFAULT_SHARES[name], { above: 0, max: 100 }),
    ),
  )
}

/** The fields of a BbrLimiter's rule that `configure` changes at run time (docs/rules/live-rules.md). */
export interface BbrLimiterRule extends ShadowRule {
  cpuThreshold?: number
  cooldown?: number
  minInFlight?: number
  queueDelay?: Partial<QueueDelayOptions>
}

/** The live rule's fields, in the rule block's order. */
export const BBR_RULE_FIELDS = ['cpuThreshold', 'cooldown', 'minInFlight', 'queueDelay.target', 'queueDelay.interval']

/** Validates the fields of the rule (the constructor's checks): [cpuThreshold, cooldown, minInFlight]. */
function resolveBbrRule(o: {
  cpuThreshold?: unknown
  cooldown?: unknown
  minInFlight?: unknown
}): [number, number, number] {
  return [
    optionalNumber('cpuThreshold', o.cpuThreshold, 800, { min: 1, max: 1000 }),
    optionalNumber('cooldown', o.cooldown, 1000, { min: 0, max: 3_600_000 }),
    optionalNumber('minInFlight', o.minInFlight, 20, { integer: true, min: 0, max: 1e9 }),
  ]
}

/** A whole rule in BBR_RULE_FIELDS order, validated; throws InvalidOptionError naming the bad field. */
export function resolveBbrRuleValues(rule: Record<string, number>): number[] {
  const queueDelay = resolveQueueDelay({ target: rule['queueDelay.target'], interval: rule['queueDelay.interval'] })
  const { target, interval } = queueDelay as QueueDelayOptions
  return [...resolveBbrRule(rule), target, interval]
}

/** The rule values a limiter made with `o` starts with (a rule that is off keeps its defaults there). */
export function bbrRuleValues(o: ResolvedBbrOptions): number[] {
  const queueDelay = o.queueDelay === false ? resolveQueueDelay(undefined) : o.queueDelay
  const { target, interval } = queueDelay as QueueDelayOptions
  return [o.cpuThreshold, o.cooldown, o.minInFlight, target, interval]
}

export function resolveBbrOptions(options: unknown): ResolvedBbrOptions {
  const o = checkOptions<BbrLimiterOptions>(options, 'options')
  const window = optionalNumber('window', o.window, 10_000, { integer: true, min: 2, max: 3_600_000 })
  const buckets = optionalNumber('buckets', o.buckets, 100, { integer: true, min: 2, max: 10_000 })
  if (window % buckets !== 0) {
    throw new InvalidOptionError('window', window, `a multiple of buckets (${buckets})`)
  }
  const { shared, namespace, maxMembers, now } = resolveSharing(o)
  const rtSampling = optionalNumber('rtSampling', o.rtSampling, now ? 1 : 8, { integer: true, min: 1, max: 1024 })
  const [cpuThreshold, cooldown, minInFlight] = resolveBbrRule(o)
  if ((rtSampling & (rtSampling - 1)) !== 0) throw new InvalidOptionError('rtSampling', rtSampling, 'a power of two')
  return {
    window,
    buckets,
    bucketMs: window / buckets,
    cpuThreshold,
    cooldown,
    minInFlight,
    signal: resolveSignal(o.signal),
    queueDelay: resolveQueueDelay(o.queueDelay),
    memory: resolveMemoryOptions(o.memory),
    latency: o.latency === false ? false : resolveLatencyOptions(o.latency, 'latency', o.now !== undefined),
    fairness: resolveFairness(o.fairness, shared),
    queue: resolveQueueOptions(o.maxWait, o.maxQueue),
    shares: resolveShares(o.priorities),
    shared,
    namespace,
    maxMembers,
    rtSampling,
    rtSamplingAuto: o.rtSampling === undefined && now === undefined,
    now,
  }
}

/** The clock the limiter reads on every call. */
export function limiterClock(o: ResolvedBbrOptions): () => number {
  return o.now ?? coarseNow
}
