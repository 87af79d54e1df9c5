import { resolveWindowOptions, windowLayout } from '../breakers/window-options'
import { WindowTally } from '../breakers/window-tally'
import { SharedRegion } from '../../foundation/regions/shared-region'
import type { SharingOptions } from '../../foundation/regions/sharing-options'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { registerComponent } from '../../foundation/common/component-registry'
import type { Event } from '../../foundation/common/event-source'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import type { RegionLayout } from '../../foundation/regions/region-layout'

export interface RetryBudgetOptions extends SharingOptions {
  /** Retries allowed per request in the window (default 0.1: at most 10 % more load from retries). */
  ratio?: number
  /** Retries allowed per second regardless of traffic, so a quiet service can still retry (default 10). */
  minPerSecond?: number
  /** Window over which requests and retries are counted, ms (default 10 000). */
  window?: number
  /** Buckets per window (default 10). */
  buckets?: number
}

/** The fields of a RetryBudget's rule that `configure` changes at run time (docs/rules/live-rules.md). */
export type RetryBudgetRule = Partial<Pick<RetryBudgetOptions, 'ratio' | 'minPerSecond'>> & ShadowRule

/** The rule's fields, in the order its block stores them. */
export const RETRY_RULE_FIELDS = ['ratio', 'minPerSecond'] as const

/** `ratio` and `minPerSecond`, validated (the constructor's checks, and live rules'). */
export function resolveRetryRule(o: { ratio?: unknown; minPerSecond?: unknown }): number[] {
  return [
    optionalNumber('ratio', o.ratio, 0.1, { min: 0, max: 1000 }),
    optionalNumber('minPerSecond', o.minPerSecond, 10, { min: 0, max: 1e9 }),
  ]
}

/**
 * The rule block of a RetryBudget's region, after its window (`bulwark top` lays a snapshot out with it too): a
 * retry it would refuse is counted for shadow mode under reason `budget`.
 */
export function placeRetryRules(layout: RegionLayout, ratio: number, minPerSecond: number): RulePlacement {
  return placeRules(layout, [ratio, minPerSecond], [{ reason: 'budget' }])
}

export interface RetryBudgetStats {
  /** First attempts recorded in the window (host-wide when shared). */
  requests: number
  /** Retries granted in the window (host-wide when shared). */
  retries: number
  /** Retries that would still be granted now. */
  available: number
  /** The live rule: its version (0 until `configure` first changed it), values and shadow mode. */
  rules: RuleStats
}

/**
 * Caps retries at a share of requests over a rolling window (plus a small reserve), so that when a backend fails
 * every call, retries add at most `ratio` to its load instead of multiplying it by the number of attempts.
 * Local by default (each worker keeps the same ratio of its own traffic); with `shared`, one budget for the host.
 * `ratio`, `minPerSecond` and shadow mode change live with `configure` (docs/rules/live-rules.md).
 */
export class RetryBudget {
  readonly shared: string | undefined
  private ratio: number
  private reserve: number
  private readonly window: number
  private readonly now: () => number
  private readonly region: SharedRegion
  private readonly tally: WindowTally
  private readonly rules: LiveRules

  constructor(options?: RetryBudgetOptions) {
    const o = checkOptions<RetryBudgetOptions>(options, 'options')
    const [ratio, minPerSecond] = resolveRetryRule(o)
    const w = resolveWindowOptions(o, { window: 10_000, buckets: 10 })
    this.shared = w.shared
    this.now = w.now
    this.window = w.window
    this.ratio = ratio
    this.reserve = (minPerSecond * w.window) / 1000
    // One add per request (value 0) or retry (value 1): count - sum is requests, sum is retries. The fingerprint
    // keeps the constructor's values: members still pass the same options, and obey the live rule.
    const settings = `ratio=${ratio} minPerSecond=${minPerSecond} rules shadow`
    const { layout, placement } = windowLayout('retry-budget', w, settings)
    const rules = placeRetryRules(layout, ratio, minPerSecond)
    this.region = SharedRegion.forComponent(w.shared, layout, w.namespace)
    this.tally = new WindowTally(this.region, placement)
    this.rules = new LiveRules(this.region, rules, {
      fields: RETRY_RULE_FIELDS,
      resolve: (rule) => resolveRetryRule(rule),
      apply: (values) => {
        this.ratio = values[0]
        this.reserve = (values[1] * this.window) / 1000
      },
    })
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes `ratio` and `minPerSecond` (and shadow mode) for every member of the host: validated as the constructor
   * validates them, refused whole (InvalidOptionError naming the field) when one is bad. The window keeps its counts.
   */
  configure(rule: RetryBudgetRule): RuleStats {
    return this.rules.configure(rule)
  }

  /** Counts a first attempt (not a retry). Never throws, never allocates. */
  recordRequest(): void {
    this.tally.record(0, this.now())
  }

  /**
   * Whether a retry may be made now; a true answer spends one retry of the budget. Never throws, never allocates.
   * Shared, the check and the spend are two steps: members deciding at the same instant may overshoot by a few.
   */
  tryAcquire(): boolean {
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    const now = this.now()
    const tally = this.tally
    tally.sync(now)
    const retries = tally.sum
    if (retries >= this.ratio * (tally.count - retries) + this.reserve) {
      // Shadow mode (docs/rules/shadow.md): counted and granted, not spent: the budget stays as enforcing leaves it.
      return rules.shadowAdmits(0)
    }
    tally.record(1, now)
    return true
  }

  stats(): RetryBudgetStats {
    this.rules.obey()
    const tally = this.tally
    tally.sync(this.now())
    const retries = tally.sum
    const requests = tally.count - retries
    const available = Math.max(0, Math.ceil(this.ratio * requests + this.reserve - retries))
    return { requests, retries, available, rules: this.rules.stats() }
  }

  /** Detaches from shared memory (a local budget just stops counting). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
registerComponent('RetryBudget', RetryBudget)
