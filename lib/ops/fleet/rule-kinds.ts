// The components a rule source can carry rules for, by region kind: the fields that change at run time and the
// checks their constructors make, run on a rule before it is written to a source and before a host applies it
// (docs/readme/fleet.md). The region a rule finally reaches checks it again, with its own options.
import { resolveBbrRuleValues, BBR_RULE_FIELDS } from '../../components/bbr/bbr-options'
import { BULKHEAD_RULE_FIELDS, resolveBulkheadRuleValues } from '../../components/bulkhead/bulkhead-options'
import { resolveCircuitRule, type CircuitStrategy } from '../../components/breakers/circuit-breaker-options'
import { resolveSreRule, SRE_RULE_FIELDS } from '../../components/breakers/sre-breaker'
import { resolveMax } from '../../components/key-limits/key-limit-region'
import { resolveRedisRule } from '../../components/ratelimit/redis/redis-rule'
import { resolveRate } from '../../components/ratelimit/token-bucket'
import { resolveRetryRule, RETRY_RULE_FIELDS } from '../../components/resilience/retry-budget'
import type { FlatRule } from '../../foundation/live-rules/live-rules'
import { checkNumber } from '../../foundation/common/validate'

export interface RuleKind {
  /** The fields a source may set (for a breaker, those of every strategy). */
  readonly fields: readonly string[]
  /** Throws InvalidOptionError naming the field when `rule` (fields not named take their defaults) is not valid. */
  check(rule: FlatRule): void
}

/** The strategy a circuit breaker's rule is written for, told by the fields it names. */
function circuitStrategy(rule: FlatRule): CircuitStrategy {
  if (rule.failureCount !== undefined) return 'errorCount'
  if (rule.slowCallRatio !== undefined || rule.slowCallDuration !== undefined) return 'slowCallRatio'
  return 'errorRatio'
}

export const RULE_KINDS: Readonly<Record<string, RuleKind>> = {
  bbr: { fields: BBR_RULE_FIELDS, check: (rule) => void resolveBbrRuleValues(rule) },
  'token-bucket': { fields: ['rate', 'burst'], check: (rule) => void resolveRate({ rate: 1, ...rule }) },
  // A KeyedLimiter's table (a HotParameterLimiter's hot values, with `shared`): one region for every key.
  'keyed-limiter': { fields: ['rate', 'burst'], check: (rule) => void resolveRate({ rate: 1, ...rule }) },
  'sliding-window': {
    fields: ['limit'],
    check: (rule) => void (rule.limit !== undefined && checkNumber('limit', rule.limit, { above: 0 })),
  },
  sre: { fields: SRE_RULE_FIELDS, check: (rule) => void resolveSreRule(rule) },
  circuit: {
    fields: ['failureRatio', 'slowCallRatio', 'slowCallDuration', 'failureCount', 'minimumCalls', 'openDuration'],
    check: (rule) => void resolveCircuitRule(circuitStrategy(rule), rule),
  },
  'key-concurrency-limiter': {
    fields: ['max'],
    check: (rule) => void (rule.max !== undefined && resolveMax(rule.max)),
  },
  'redis-rate-limiter': {
    fields: ['limit', 'window', 'burst'],
    check: (rule) =>
      void resolveRedisRule(rule.burst === undefined ? 'sliding-window' : 'gcra', { limit: 1, window: 1000, ...rule }),
  },
  // A bound not named takes the loosest value here (the region checks the rule again with its own).
  bulkhead: {
    fields: BULKHEAD_RULE_FIELDS,
    check: (rule) => void resolveBulkheadRuleValues({ 'latency.minLimit': 1, ...rule }),
  },
  'retry-budget': { fields: RETRY_RULE_FIELDS, check: (rule) => void resolveRetryRule(rule) },
}

/** The region kinds a source carries rules for, as `bulwark set --source` lists them. */
export const RULE_KIND_NAMES = Object.keys(RULE_KINDS)
