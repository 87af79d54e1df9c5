import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { type KeyedFactory, KeyedPool, type KeyedPoolStats } from '../../foundation/keyed/keyed-pool'
import { boundedKey } from '../../foundation/common/bounded-key'
import type { KeyedOptions } from '../../foundation/keyed/keyed-options'
import { joinGroupSwitches, resolveSwitches, type Switchboard } from '../switches/breaker-switch'
import { checkOptions, checkSharedName } from '../../foundation/common/validate'
import type { Breaker } from './breaker'
import { registerComponent } from '../../foundation/common/component-registry'

/**
 * Makes the breaker of one key. `shared` is the key's own shared name when the group is shared (pass it to the
 * breaker's `shared` option), else undefined.
 */
export type BreakerFactory<B> = KeyedFactory<B>

/**
 * Keys a shared group holds by default: each is a region of about 21 KiB at 64 members, so 256 keys cost the host
 * about 5.3 MiB of shared memory whoever picks the keys (docs/guide/trust.md); local breakers cost about 1 KiB each.
 */
export const SHARED_GROUP_MAX_KEYS = 256

/**
 * Options of a BreakerGroup (`maxKeys` default 1000, 256 when `shared`; `idleTimeout` 60 000 ms). With `shared`,
 * key k's breaker gets the shared name `<shared>.<an HMAC of k>` (keySharedName), the same in every process. A key
 * longer than 128 characters is kept as its first 64, `#` and a hash (boundedKey, docs/guide/trust.md): the form
 * the factory, `keys()` and a `breaker:<group>/<key>` switch see.
 */
export interface BreakerGroupOptions extends KeyedOptions {
  /**
   * Operators' switches (docs/guide/degrade.md, "Manual switches"): `breaker:<name>` forces every key's breaker open
   * or closed, `breaker:<name>/<key>` one key's. Obeyed by SreBreaker and CircuitBreaker members.
   */
  switches?: Switchboard
  /** The name switches address the group by (default: `shared`; needed with `switches` when not shared). */
  name?: string
}

export type BreakerGroupStats = KeyedPoolStats

const timeToRest = (breaker: Breaker): number => (breaker.state === 'closed' ? 0 : Infinity)
const defaultMaxKeys = (o: KeyedOptions): number => (o.shared === undefined ? 1000 : SHARED_GROUP_MAX_KEYS)

/**
 * One breaker per key (a downstream, a route, a host), made on first use, in a KeyedPool: bounded by `maxKeys`, no
 * timer per key. A breaker is at rest when it is closed; one that is open or half-open is never dropped (its key
 * would start afresh, closed, and send a failing downstream a full window of calls again). When every key the
 * group looks at is open, a new key is refused: `get` returns undefined and the caller refuses the call, as an
 * open breaker would.
 */
export class BreakerGroup<B extends Breaker> {
  declare private readonly pool: KeyedPool<B>

  constructor(factory: BreakerFactory<B>, options?: BreakerGroupOptions) {
    const { switches, name, ...keyed } = checkOptions<BreakerGroupOptions>(options, 'options')
    const board = resolveSwitches(switches)
    if (board === undefined) {
      this.pool = new KeyedPool<B>(factory, { ...keyed, timeToRest }, defaultMaxKeys(keyed))
      return
    }
    const group = name ?? keyed.shared
    if (group === undefined) throw new InvalidOptionError('name', name, 'a name for the switches (or `shared`)')
    checkSharedName('name', group)
    const switched: BreakerFactory<B> = (key, shared) => {
      const breaker = factory(key, shared)
      joinGroupSwitches(breaker, board, group, key)
      return breaker
    }
    this.pool = new KeyedPool<B>(switched, { ...keyed, timeToRest }, defaultMaxKeys(keyed))
  }

  get shared(): string | undefined {
    return this.pool.shared
  }

  get maxKeys(): number {
    return this.pool.maxKeys
  }

  /** The breaker of `key`, made now if the key is new; undefined when the group has no room for it. */
  get(key: string): B | undefined {
    return this.pool.get(boundedKey(key))
  }

  /** Whether `key` has a breaker: true exactly when get(key) returns the one it has. Does not count as a use. */
  has(key: string): boolean {
    return this.pool.has(boundedKey(key))
  }

  /** Drops `key` and closes its breaker. */
  delete(key: string): boolean {
    return this.pool.delete(boundedKey(key))
  }

  get size(): number {
    return this.pool.size
  }

  keys(): string[] {
    return this.pool.keys()
  }

  /** Calls `fn` with each key's breaker, without counting as a use (for metrics and diagnostics). */
  forEach(fn: (breaker: B, key: string) => void): void {
    this.pool.forEach(fn)
  }

  stats(): BreakerGroupStats {
    return this.pool.stats()
  }

  /** Drops every key and closes every breaker (a later get() starts afresh). Idempotent. */
  close(): void {
    this.pool.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
registerComponent('BreakerGroup', BreakerGroup)
