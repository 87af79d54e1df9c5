// 'bulwark/top': a read-only view of the host's shared regions, what `npx bulwark top` shows (for dashboards and
// health checks of your own). It never joins a region or keeps one alive.
export { inspectRegions } from '../ops/top/inspect'
export type { InspectOptions } from '../ops/top/inspect'
export { HostWatcher } from '../ops/top/host-watcher'
export type {
  BulkheadView,
  CircuitBreakerView,
  ComponentView,
  HostFrame,
  HotKey,
  HotKeysView,
  KeyedTableView,
  LimiterView,
  MemberView,
  RedisRuleView,
  RegionReport,
  RetryBudgetView,
  RoutingView,
  RulesWatcherView,
  SlidingWindowView,
  SreBreakerView,
  SwitchesView,
  TokenBucketView,
} from '../ops/top/views'
export type { RulesRefusal } from '../foundation/live-rules/fleet-region'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
