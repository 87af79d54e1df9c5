import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import type { Event } from '../../foundation/common/event-source'
import type { FingerprintFunction } from '../../foundation/keyed-table/keyed-table'
import {
  KEYED,
  type KeyedTablePlacement,
  placeKeyedTable,
  ticksPerMsFor,
} from '../../foundation/keyed-table/keyed-table-layout'
import type { HeavyKey } from '../../foundation/keyed-table/heavy-keys'
import { RateTable } from '../../foundation/keyed-table/rate-table'
import { native } from '../../foundation/native/load-native'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { placeRules, RATE_SHADOW, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { type SharingOptions, resolveSharing } from '../../foundation/regions/sharing-options'
import { type Clock, coarseNow } from '../../foundation/signals/clock'
import { checkNumber, optionalNumber } from '../../foundation/common/validate'
import type { WaitingOptions } from './waiting/limiter-permits'

/** The region kind of a KeyedLimiter's table (`bulwark top` and `bulwark set` find it by it). */
export const KEYED_LIMITER_KIND = 'keyed-limiter'

/** The table form of a KeyedLimiter: one token bucket per key, every key in one table (docs/rules/keyed-table.md). */
export interface KeyedLimiterTableOptions extends SharingOptions, WaitingOptions {
  /** Tokens each key gets per second (> 0). */
  rate: number
  /** Each key's capacity: the most tokens it has at once (default: one second's worth, at least 1). */
  burst?: number
  /** Keys the table holds at once (default 10 000, at most 8 388 608): its memory, 32 bytes a key, is all made now. */
  maxKeys?: number
  /**
   * The limit that keys finding no slot share (the table full of keys still refilling, a key over `maxKeyLength`),
   * in keys' worth of `rate` and `burst` (default 1 % of maxKeys, at least 1).
   */
  overflow?: number
  /** Longest key (UTF-16 units) that gets a slot of its own; a longer one takes from the overflow (default 256). */
  maxKeyLength?: number
  /** @internal Replaces the keys' fingerprint (tests of collisions). */
  fingerprint?: FingerprintFunction
}

/** The fields of a KeyedLimiter table's rule that `configure` changes at run time. */
export type KeyedLimiterRule = Partial<Pick<KeyedLimiterTableOptions, 'rate' | 'burst'>> & ShadowRule

/** What the table form adds to a KeyedLimiter's stats. */
export interface KeyedTableStats {
  rate: number
  burst: number
  /** Slots: twice maxKeys, rounded up to buckets of eight. */
  capacity: number
  /** Keys' worth of the limit that keys without a slot share. */
  overflow: number
  /** Keys given a slot whose owner was at rest (host-wide when shared, as every count below). */
  reused: number
  /** Decisions made on the overflow limit: admitted and refused. */
  overflowAdmitted: number
  overflowRefused: number
  /** Requests with a key over maxKeyLength (decided on the overflow). */
  longKeys: number
  /** Requests refused because a slot's word kept changing under every compare-and-swap (bounded; trust guide). */
  contended: number
  /** Claims left by a member that stopped or died mid-claim, broken so that their slot serves again. */
  brokenClaims: number
  /** Requests refused by their key's own limit. */
  refused: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
}

function resolveRate(o: { rate?: unknown; burst?: unknown }): [rate: number, burst: number] {
  const rate = checkNumber('rate', o.rate, { above: 0 })
  return [rate, optionalNumber('burst', o.burst, Math.max(1, rate), { above: 0, max: KEYED.maxTau })]
}

interface Placed {
  table: KeyedTablePlacement
  rules: RulePlacement
}

/**
 * The table form behind KeyedLimiter: a RateTable in a region of its own (local or shared), its live rule, its
 * options. KeyedLimiter calls it straight from its own methods.
 * @internal
 */
export class KeyedRateLimits {
  declare readonly shared: string | undefined
  declare readonly maxKeys: number
  declare readonly overflowKeys: number
  declare readonly table: RateTable
  declare private readonly rules: LiveRules
  /** The clock its decisions are made by (waiting keeps time by it too). */
  declare readonly now: Clock
  declare private rateValue: number
  declare private burstValue: number
  private invalidArguments = 0

  constructor(options: KeyedLimiterTableOptions) {
    const o = options
    const [rate, burst] = resolveRate(o)
    if ((o as { idleTimeout?: unknown }).idleTimeout !== undefined) {
      const idle = (o as { idleTimeout?: unknown }).idleTimeout
      throw new InvalidOptionError('idleTimeout', idle, 'left out: a table reuses the slots of keys at rest')
    }
    this.maxKeys = optionalNumber('maxKeys', o.maxKeys, 10_000, { integer: true, min: 1, max: KEYED.maxKeys })
    const fallback = Math.max(1, Math.ceil(this.maxKeys / 100))
    const overflow = optionalNumber('overflow', o.overflow, fallback, { integer: true, min: 1, max: this.maxKeys })
    // The overflow's burst must fit its ticks too: at most maxTau permits in all.
    this.overflowKeys = Math.max(1, Math.min(overflow, Math.floor(KEYED.maxTau / Math.ceil(burst))))
    const maxKeyLength = optionalNumber('maxKeyLength', o.maxKeyLength, 256, { integer: true, min: 1, max: 4096 })
    if (o.fingerprint !== undefined && typeof o.fingerprint !== 'function')
      throw new InvalidOptionError('fingerprint', o.fingerprint, 'a function')
    const sharing = resolveSharing(o)
    this.shared = sharing.shared
    this.now = sharing.now ?? coarseNow

    const shape = { rate, burst, maxKeys: this.maxKeys, overflowKeys: this.overflowKeys, maxKeyLength }
    const layout = keyedLimiterLayout(sharing.lanes, shape)
    const placed = placeKeyedLimiter(layout, shape, this.now())
    const region = SharedRegion.forComponent(sharing.shared, layout, sharing.namespace)
    this.table = new RateTable(region, placed.table, maxKeyLength, o.fingerprint)
    this.rateValue = rate
    this.burstValue = burst
    this.table.setRule(rate, burst, this.overflowKeys)
    this.rules = new LiveRules(region, placed.rules, {
      fields: ['rate', 'burst'],
      resolve: (rule) => {
        const values = resolveRate(rule)
        if (!this.table.fits(values[0], values[1], this.overflowKeys)) {
          throw new InvalidOptionError('burst', values[1], "a burst whose span (burst / rate) fits the table's ticks")
        }
        return values
      },
      apply: (values) => {
        this.rateValue = values[0]
        this.burstValue = values[1]
        this.table.setRule(values[0], values[1], this.overflowKeys)
      },
    })
  }

  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  get rate(): number {
    return this.rules.pending()?.[0] ?? this.rateValue
  }

  get burst(): number {
    return this.rules.pending()?.[1] ?? this.burstValue
  }

  configure(rule: KeyedLimiterRule): RuleStats {
    return this.rules.configure(rule)
  }

  tryAcquire(key: string, n: number): boolean {
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    if (typeof key !== 'string' || !(typeof n === 'number' && n > 0 && n <= this.burstValue)) return this.bad(key, n)
    // In shadow mode the table still counts the refusal (its heaviest keys are what would be refused).
    return this.table.acquire(key, n, this.now()) || rules.shadowAdmits(0)
  }

  retryAfterMs(key: string, n: number): number {
    this.rules.obey()
    if (n > this.burstValue) return Infinity
    return this.table.retryAfterMs(key, n, this.now())
  }

  available(key: string): number {
    this.rules.obey()
    return this.table.available(key, this.now())
  }

  /** The heaviest keys now, by refusals (keys come from requests: escape them before showing them). */
  heaviest(limit?: number): HeavyKey[] {
    return this.table.heaviest(limit)
  }

  stats(): { size: number; invalidArguments: number; table: KeyedTableStats } {
    const t = this.table
    const table: KeyedTableStats = {
      rate: this.rate,
      burst: this.burst,
      capacity: t.capacity,
      overflow: this.overflowKeys,
      reused: t.total('reused'),
      overflowAdmitted: t.total('overflowAdmitted'),
      overflowRefused: t.total('overflowRefused'),
      longKeys: t.total('longKeys'),
      contended: t.total('contended'),
      brokenClaims: t.total('brokenClaims'),
      refused: t.total('refused'),
      rules: this.rules.stats(),
    }
    return { size: t.size, invalidArguments: this.invalidArguments, table }
  }

  close(): void {
    this.table.close()
  }

  /** A key that is not a string, or a permit count out of range: refused; only a bad argument is counted. */
  private bad(key: unknown, n: unknown): boolean {
    if (typeof key !== 'string' || !(typeof n === 'number' && n > 0 && n < Infinity)) {
      this.invalidArguments++
      return false
    }
    return this.rules.shadowAdmits(0) // more than `burst`: a refusal the shadow mode admits
  }
}

/** What sizes a KeyedLimiter's table and its members agree on (its region's fingerprint). */
export interface KeyedLimiterShape {
  rate: number
  burst: number
  maxKeys: number
  overflowKeys: number
  maxKeyLength: number
}

/** The layout of a KeyedLimiter's region, its fingerprint naming the shape (`bulwark top` and `set` read it back). */
export function keyedLimiterLayout(lanes: number, s: KeyedLimiterShape): RegionLayout {
  return new RegionLayout(KEYED_LIMITER_KIND, lanes).describe(
    `v2 rate=${s.rate} burst=${s.burst} keys=${s.maxKeys} overflow=${s.overflowKeys} keyLength=${s.maxKeyLength}`,
  )
}

/** The shape a KeyedLimiter region's fingerprint names. */
export function keyedLimiterShape(f: { number(key: string): number }): KeyedLimiterShape {
  const [rate, burst, maxKeys] = [f.number('rate'), f.number('burst'), f.number('keys')]
  return { rate, burst, maxKeys, overflowKeys: f.number('overflow'), maxKeyLength: f.number('keyLength') }
}

/**
 * A KeyedLimiter's table in its region (seed, origin and ticks written once, by the member that creates it), then
 * its rule block.
 */
export function placeKeyedLimiter(layout: RegionLayout, s: KeyedLimiterShape, origin: number): Placed {
  const table = placeKeyedTable(layout, {
    maxKeys: s.maxKeys,
    seed: native.keyedSeed(),
    origin,
    ticksPerMs: ticksPerMsFor(s.rate, s.burst),
    overflowTicksPerMs: ticksPerMsFor(s.rate * s.overflowKeys, s.burst * s.overflowKeys),
  })
  return { table, rules: placeRules(layout, [s.rate, s.burst], RATE_SHADOW) }
}
