// What `bulwark top` reports for each region (also its --json output). Counters are host-wide totals since the
// region was created; `rates` are per second between the last two samples.
import type { LatencyStats } from '../../admission/limits/latency-stats'
import type { BbrLimiterStats } from '../../components/bbr/bbr-limiter'
import type { HeavyKey } from '../../foundation/keyed-table/heavy-keys'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import type { RulesRefusal } from '../../foundation/live-rules/fleet-region'
import type { RouteRule } from '../../components/routing/route-rules'

/**
 * A BbrLimiter as its stats() would report it host-wide, except `load`, the highest load (permille) any live member
 * last measured, and `admitFraction`, the lowest queueing-delay admit fraction among them.
 */
export interface LimiterView extends Omit<BbrLimiterStats, 'queueDelay' | 'fairness' | 'queue' | 'memory'> {
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

/** A keyed table (docs/rules/keyed-table.md): one region for every key of a KeyedLimiter or KeyConcurrencyLimiter. */
export interface KeyedTableView {
  type: 'keyed-table'
  component: 'KeyedLimiter' | 'KeyConcurrencyLimiter'
  /** Keys holding a slot, of `capacity` slots (twice maxKeys). */
  size: number
  capacity: number
  maxKeys: number
  /** Slots given to a new key from one at rest. */
  reused: number
  /** Decisions made on the overflow limit (keys that found no slot). */
  overflow: { admitted: number; refused: number }
  /** Requests refused by their key's own limit, and requests with a key over the length bound. */
  refused: number
  longKeys: number
  /** The keys refused most, sampled (their text is what requests sent: escaped when shown). */
  heaviest: HeavyKey[]
  rules: RuleStats
}

/** An operators' switchboard: its active switches (docs/guide/degrade.md, "Manual switches"). */
export interface SwitchesView {
  type: 'switches'
  switches: Array<{ target: string; mode: 'open' | 'closed' | 'shed' | 'fallback'; since: number }>
}

/** A gray router (docs/readme/integrations.md, "Gray routing"): its rules in order, and where requests went. */
export interface RoutingView {
  type: 'routing'
  /** The rules' version: +2 with every change. */
  version: number
  routes: RouteRule[]
  /** The rules text did not read back as valid rules (its routers keep their last good ones). */
  unreadable: boolean
  /** Requests routed to each group by every router of the region, since it was made. */
  groups: Array<{ group: string; routed: number }>
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

/** An AdaptiveBulkhead (one upstream's, alone or a pool's): its calls host-wide and what its limit learned. */
export interface BulkheadView {
  type: 'bulkhead'
  inFlight: number
  admitted: number
  shed: number
  latency: LatencyStats
  /** The live rule (its values are the latency tunables in force) and shadow mode. */
  rules: RuleStats
}

/** A RetryBudget: its window's first attempts and retries, and the retries it would still grant. */
export interface RetryBudgetView {
  type: 'retry-budget'
  requests: number
  retries: number
  available: number
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
  | KeyedTableView
  | RedisRuleView
  | RulesWatcherView
  | BulkheadView
  | RetryBudgetView
  | RoutingView

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
