// 'bulwark/fleet': one set of rules and switches for every host of a fleet, from Redis, etcd or a file
// (docs/guide/fleet.md). A process started with BULWARK_RULES follows it without importing this; this entry is
// for doing the same from code, and for rule sources of your own. Loaded in the thread a host's watcher keeps a
// URL's source in (ops/fleet/thread-rule-source.ts), it serves that source.
import '../ops/fleet/source-thread'

export { followRules, rulesFollower, RulesFollower } from '../ops/fleet/rules-follower'
export type { FollowRulesOptions, RulesFollowerStats } from '../ops/fleet/rules-follower'
export type { RuleSource, SourceDocument } from '../ops/fleet/rule-source'
export { RedisRuleSource } from '../ops/fleet/redis-rule-source'
export type { RedisRuleSourceOptions, RuleRedisClient } from '../ops/fleet/redis-rule-source'
export { EtcdRuleSource } from '../ops/fleet/etcd-rule-source'
export type { EtcdRuleSourceOptions } from '../ops/fleet/etcd-rule-source'
export { FileRuleSource } from '../ops/fleet/file-rule-source'
export type { FileRuleSourceOptions } from '../ops/fleet/file-rule-source'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
