import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { KEYED, placeKeyedTable, ticksPerMsFor } from '../../foundation/keyed-table/keyed-table-layout'
import { RateTable } from '../../foundation/keyed-table/rate-table'
import { native } from '../../foundation/native/load-native'
import { RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import { type Clock, coarseNow } from '../../foundation/signals/clock'

export const BAN_LIST_KIND = 'ban-list'

export interface BanListOptions extends SharingOptions {
  /** Refusals that ban a key: this many close together, or more than this many per `window` (default 10). */
  after?: number
  /** Milliseconds over which `after` refusals ban (default 60 000). */
  window?: number
  /** Milliseconds a ban lasts (default 600 000: ten minutes). */
  duration?: number
  /** Keys tracked at once (default 10 000), in each of its two keyed tables: 32 bytes a key, made now. */
  maxKeys?: number
  /** Longest key (UTF-16 units) that can be banned (default 256); a longer one never is. */
  maxKeyLength?: number
}

export interface BanListStats {
  after: number
  window: number
  duration: number
  maxKeys: number
  /** Bans made (host-wide when shared, as every count here). */
  bans: number
  /** Refusals counted toward a ban. */
  strikes: number
  /** Bans not recorded because every slot of the key's buckets held a key banned or striking (trust guide). */
  unrecorded: number
}

const COUNTERS = { bans: 0, strikes: 1, unrecorded: 2 } as const

/**
 * Bans (docs/rules/access-lists.md, "Bans"): a key refused `after` times close together (a burst), or more than
 * `after` times per `window` for as long as it keeps going, is banned for `duration`: refused at once, whatever its
 * limits say (rate-limiter-flexible's `blockDuration`). With `shared`, one list for the host: a key banned by one
 * worker is banned in every one. Both counts live in keyed tables (docs/rules/keyed-table.md): bounded by `maxKeys`,
 * no object per key; a key that finds no slot is never banned, so that a flood of keys cannot ban the innocent.
 */
export class BanList {
  declare readonly shared: string | undefined
  declare readonly after: number
  declare readonly window: number
  declare readonly duration: number
  declare readonly maxKeys: number
  declare private readonly region: SharedRegion
  declare private readonly strikesTable: RateTable | undefined
  declare private readonly bansTable: RateTable
  declare private readonly now: Clock
  declare private readonly f64: Float64Array
  declare private readonly counters: number
  declare private readonly counterFirst: number
  declare private readonly counterStride: number

  constructor(options?: BanListOptions) {
    const o = checkOptions<BanListOptions>(options, 'options')
    this.after = optionalNumber('after', o.after, 10, { integer: true, min: 1, max: 1_000_000 })
    this.window = optionalNumber('window', o.window, 60_000, { min: 100, max: 86_400_000 })
    this.duration = optionalNumber('duration', o.duration, 600_000, { min: 1, max: 7 * 86_400_000 })
    this.maxKeys = optionalNumber('maxKeys', o.maxKeys, 10_000, { integer: true, min: 1, max: KEYED.maxKeys })
    const maxKeyLength = optionalNumber('maxKeyLength', o.maxKeyLength, 256, { integer: true, min: 1, max: 4096 })
    const sharing = resolveSharing(o)
    this.shared = sharing.shared
    this.now = sharing.now ?? coarseNow
    const { after, window, duration, maxKeys } = this
    const layout = new RegionLayout(BAN_LIST_KIND, sharing.lanes).describe(
      `v1 after=${after} window=${window} duration=${duration} keys=${maxKeys} keyLength=${maxKeyLength}`,
    )
    const counters = layout.lanes64(3)
    // A strike table only when a ban takes more than one refusal: `after - 1` of them close together pass.
    const strikeRate = (after * 1000) / window
    const origin = this.now()
    const table = (keys: number, rate: number, burst: number) =>
      placeKeyedTable(layout, {
        maxKeys: keys,
        seed: native.keyedSeed(),
        origin,
        ticksPerMs: ticksPerMsFor(rate, burst),
        overflowTicksPerMs: ticksPerMsFor(rate, burst),
      })
    const strikes = after > 1 ? table(maxKeys, strikeRate, after - 1) : undefined
    const bans = table(maxKeys, 1000 / duration, 1)
    this.region = SharedRegion.forComponent(sharing.shared, layout, sharing.namespace)
    this.f64 = this.region.f64
    this.counterFirst = (this.region.base + counters.offset) / 8
    this.counterStride = counters.stride / 8
    this.counters = this.counterFirst + this.region.member * this.counterStride
    if (strikes !== undefined) {
      this.strikesTable = new RateTable(this.region, strikes, maxKeyLength)
      this.strikesTable.setRule(strikeRate, after - 1, 1)
    } else this.strikesTable = undefined
    this.bansTable = new RateTable(this.region, bans, maxKeyLength)
    this.bansTable.setRule(1000 / duration, 1, 1)
  }

  /**
   * Hot path: milliseconds `key` stays banned (0: not banned). One look-up in a keyed table; never throws or
   * allocates.
   */
  bannedMs(key: string): number {
    return typeof key === 'string' ? this.bansTable.debtMs(key, this.now()) : 0
  }

  /**
   * Counts a refusal of `key` toward its ban; true when it bans the key now. Only a key that holds a slot of its own
   * is banned: when its strike comes from the share that keys without a slot take, it is not.
   */
  strike(key: string): boolean {
    if (typeof key !== 'string') return false
    this.f64[this.counters + COUNTERS.strikes]++
    const strikes = this.strikesTable
    const now = this.now()
    if (strikes !== undefined && (strikes.acquire(key, 1, now) || strikes.debtMs(key, now) === 0)) return false
    return this.ban(key)
  }

  /** Bans `key` for `duration` from now (the application's own decision); false when it could not be recorded. */
  ban(key: string): boolean {
    if (typeof key !== 'string') return false
    const now = this.now()
    if (this.bansTable.debtMs(key, now) > 0) return false // banned already: the ban runs its course
    this.bansTable.acquire(key, 1, now)
    if (this.bansTable.debtMs(key, now) > 0) {
      this.f64[this.counters + COUNTERS.bans]++
      return true
    }
    this.f64[this.counters + COUNTERS.unrecorded]++
    return false
  }

  stats(): BanListStats {
    const { after, window, duration, maxKeys } = this
    return { after, window, duration, maxKeys, ...this.totals() }
  }

  /** Detaches (the bans stay while another process holds the list). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private totals(): { bans: number; strikes: number; unrecorded: number } {
    const lanes = this.region.laneHighWater()
    const sum = (c: number) => {
      let total = 0
      for (let lane = 0; lane < lanes; lane++) total += this.f64[this.counterFirst + lane * this.counterStride + c]
      return total
    }
    return { bans: sum(COUNTERS.bans), strikes: sum(COUNTERS.strikes), unrecorded: sum(COUNTERS.unrecorded) }
  }
}
