// What `bulwark top` reports for each region (also its --json output). Counters are host-wide totals since the
// region was created; `rates` are per second between the last two samples.
import type { BbrLimiterStats } from '../bbr/bbr-limiter'
import type { RulesRefusal } from '../ops/fleet/host-status'
import type { RuleStats } from '../rules/live-rules'

/**
 * A BbrLimiter as its stats() would report it host-wide, except `load`, the highest load (permille) any live member
 * last measured, and `admitFraction`, the lowest queueing-delay admit fraction among them.
 */
export interface LimiterView extends Omit<BbrLimiterStats, 'queueDelay' | 'fairness' | 'queue'> {
  type: 'limiter'
  rates?: { admitted: number; shed: number; shedInFlight: number; shedQueueDelay: number; shedLatency: number }
}

export interface SreBreakerView {
  type: 'sre-breaker'
  state: 'closed' | 'open'
  dropProbability: number
  accepts: number
  calls: number
  /** Share of the window's calls that were not accepted. */
  failureRatio: number
  /** The live rule (its values are the success and minimumCalls in force). */
  rules: RuleStats
}

export interface CircuitBreakerView {
  type: 'circuit-breaker'
  /** The state as stored: an open breaker becomes half-open at its next call after openDuration. */
  state: 'closed' | 'open' | 'half-open'
  /** ms since the state began */
  stateAge: number
  calls: number
  badCalls: number
  badRatio: number
  probesIssued: number
  probesPassed: number
  /** The live rule (its values are the thresholds in force). */
  rules: RuleStats
}

export interface HotKey {
  key: string
  count: number
  /** The key was bytes (shown as hex). */
  binary?: true
  /** Only the key's first bytes were published. */
  truncated?: true
}

export interface HotKeysView {
  type: 'hot-keys'
  k: number
  /** Increments counted (halved by each fading). */
  total: number
  keys: HotKey[]
  rates?: { counted: number }
}

export interface TokenBucketView {
  type: 'token-bucket'
  rate: number
  burst: number
  available: number
  /** The live rule (its values are the rate and burst in force). */
  rules: RuleStats
}

export interface SlidingWindowView {
  type: 'sliding-window'
  limit: number
  window: number
  used: number
  available: number
  /** The live rule (its value is the limit in force). */
  rules: RuleStats
}

/** A KeyConcurrencyLimiter's own region (docs/rules/key-concurrency.md): the `max` every member obeys. */
export interface KeyConcurrencyLimiterView {
  type: 'key-concurrency-limiter'
  max: number
  /** The live rule (its value is the max in force). */
  rules: RuleStats
}

/** One key of a shared KeyConcurrencyLimiter (region `key-concurrency.<namespace>.<limiter>.<key>.<hash>`). */
export interface KeyInFlightView {
  type: 'key-in-flight'
  /** The key's requests in flight, summed over the live members. */
  inFlight: number
}

/** An operators' switchboard: its active switches (docs/guide/degrade.md, "Manual switches"). */
export interface SwitchesView {
  type: 'switches'
  switches: Array<{ target: string; mode: 'open' | 'closed' | 'shed' | 'fallback'; since: number }>
}

/** A RedisRateLimiter's shared rule (the decisions' state is in Redis, not on the host). */
export interface RedisRuleView {
  type: 'redis-rate-limiter'
  algorithm: 'sliding-window' | 'gcra'
  limit: number
  window: number
  /** GCRA only. */
  burst?: number
  rules: RuleStats
}

/** What `bulwark top` and `bulwark rules status` show of a host's rules watcher (docs/readme/fleet.md). */
export interface RulesWatcherView {
  type: 'rules-watcher'
  /** The source, as the watcher shows it ('' before a watcher started). */
  source: string
  /** The watching member's process and thread (undefined: none now). */
  watcher: { pid: number; threadId: number } | undefined
  /** Date.now() when that watcher took over. */
  watcherSince: number
  /** Members following the source on this host. */
  followers: number
  host: string
  labels: Record<string, string>
  /** The version the host obeys (0: none). */
  version: number
  canary: boolean
  /** Its last change's author and time. */
  author?: string
  time?: string
  sourceUp: boolean
  /** Ms since the watcher last heard the source; Infinity if never. */
  staleMs: number
  /** Obeying the last good rules from disk, not yet confirmed by the source. */
  fromDisk: boolean
  refused: number
  applied: number
  refusals: RulesRefusal[]
  lastError?: string
}

export type ComponentView =
  | LimiterView
  | SreBreakerView
  | CircuitBreakerView
  | HotKeysView
  | TokenBucketView
  | SlidingWindowView
  | SwitchesView
  | KeyConcurrencyLimiterView
  | KeyInFlightView
  | RedisRuleView
  | RulesWatcherView

export interface MemberView {
  pid: number
  threadId: number
  alive: boolean
}

export interface RegionReport {
  /** The full region name: `<kind>.<namespace>.<shared>`. */
  region: string
  kind: string
  /** The application namespace (docs/guide/trust.md); '' for a region opened without one. */
  namespace: string
  /** The `shared` name the components were given. */
  name: string
  bytes: number
  /** Live members (threads x instances attached). */
  liveMembers: number
  /** Processes with a live member. */
  pids: number[]
  members: MemberView[]
  /** 'unknown': a kind `bulwark top` does not read; 'unreadable': another layout version, or a read failed. */
  status: 'ok' | 'unknown' | 'unreadable'
  detail?: string
  /** Host monotonic ms at which the region was created (or rebuilt after its members died): counters start there. */
  createdAt: number
  generation: number
  view?: ComponentView
}

export interface HostFrame {
  /** Wall-clock time of the sample (ISO 8601). */
  time: string
  /** Seconds the rates were measured over (0 on the first sample). */
  interval: number
  regions: RegionReport[]
}
