// 'bulwark/top': a read-only view of the host's shared regions, what `npx bulwark top` shows (for dashboards and
// health checks of your own). It never joins a region or keeps one alive.
export { inspectRegions } from '../top/inspect'
export type { InspectOptions } from '../top/inspect'
export { HostWatcher } from '../top/host-watcher'
export type {
  CircuitBreakerView,
  ComponentView,
  HostFrame,
  HotKey,
  HotKeysView,
  KeyConcurrencyLimiterView,
  KeyInFlightView,
  LimiterView,
  MemberView,
  RedisRuleView,
  RegionReport,
  RulesWatcherView,
  SlidingWindowView,
  SreBreakerView,
  SwitchesView,
  TokenBucketView,
} from '../top/views'
export type { RulesRefusal } from '../ops/fleet/host-status'
