import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { EventSource } from '../../foundation/common/event-source'
import { native } from '../../foundation/native/load-native'
import type { NativeHeavyKeeper } from '../../foundation/native/native-types'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { HeavyKeeperFront, frontBytes } from './heavy-keeper-front'
import { FRONT_LITERALS_AGREE, FRONT_MAX_DEPTH } from './heavy-keeper-front-layout'
import { describeHeavyKeeper, laneBytes, nativeKeeperConfig } from './heavy-keeper-layout'
import { type HeavyKeeperOptions, resolveHeavyKeeperOptions } from './heavy-keeper-options'
import { registerComponent } from '../../foundation/common/component-registry'

const sizes = native.heavyKeeperLayout

/** One key of the top-k with its estimated count. */
export interface TopKItem<K> {
  key: K
  count: number
  /**
   * Set on a key longer than `HeavyKeeper.publishedKeyBytes` bytes: HeavyKeeper keeps such a key as its first
   * bytes plus a hash of the whole (memory per key stays bounded), and `key` is those first bytes, cut at a whole
   * character for a string (docs/rules/heavykeeper.md, "Long keys").
   */
  truncated?: true
}

/** What HeavyKeeper.stats() reports. */
export interface HeavyKeeperStats {
  k: number
  /** Keys in the top-k now (host-wide when shared). */
  keys: number
  /** Sum of every increment (of every member when shared), halved by each fading. */
  total: number
  /** Bytes of sketch (width x depth x 8). */
  sketchBytes: number
  /** add calls with a key that is not a string or a Uint8Array, or a bad increment (ignored, not thrown). */
  invalidArguments: number
  /**
   * Shared only: compare-and-swap loops on the sketch this instance gave up after 64 lost races in a row, which
   * takes another writer changing a bucket between every load and swap (a member gone wrong): an add not counted
   * in a bucket, a bucket a fading left unhalved, or a fading claim left to another member (docs/guide/trust.md).
   * Honest contention never reaches it; 0 when local.
   */
  contentionTimeouts: number
}

type AddFn = (key: unknown, incr: unknown) => number

const closedAdd: AddFn = () => 0

/**
 * HeavyKeeper top-k (docs/rules/heavykeeper.md): finds the k heaviest keys of a stream in fixed memory. The sketch
 * and the heap are native; keys are hashed from their bytes (a string's UTF-8 or a Uint8Array as is) with murmur3, so a
 * Go service using the reference puts a key in the same buckets.
 *
 * With `shared`, every thread and process of the host that uses the same name updates one sketch in shared memory
 * (a compare-and-swap per bucket), and `list()` on any of them returns the host's top-k: each member keeps the
 * heap of the keys it saw, ranked by the host-wide counts, and publishes it for the others.
 *
 * Keys come back from `list()` and `onExpelled` in the form they were first added in (string or bytes); a key longer
 * than `publishedKeyBytes` comes back as its first bytes, marked `truncated`.
 */
export class HeavyKeeper<K extends string | Uint8Array = string> {
  /** Keys up to this many bytes are kept (and listed) whole; longer ones as their first bytes plus a hash. */
  static readonly publishedKeyBytes: number = sizes.inlineKey
  readonly k: number
  readonly width: number
  readonly depth: number
  readonly decay: number
  readonly minCount: number
  readonly shared: string | undefined
  /** Bytes of sketch (width x depth x 8). */
  readonly sketchBytes: number
  private readonly region: SharedRegion
  private readonly keeper: NativeHeavyKeeper
  private nativeAdd: AddFn
  /**
   * Serves adds of string keys native code has seen without crossing into it (local keepers only). What it defers
   * is flushed to the sketch before every call into native code below.
   */
  private front: HeavyKeeperFront | undefined
  private invalidArguments = 0
  private readonly expelled = new EventSource<TopKItem<K>>()

  constructor(options: HeavyKeeperOptions = {}) {
    const o = resolveHeavyKeeperOptions(options, (k) => laneBytes(k, true))
    this.k = o.k
    this.width = o.width
    this.depth = o.depth
    this.decay = o.decay
    this.minCount = o.minCount
    this.shared = o.shared
    this.sketchBytes = o.width * o.depth * sizes.bucketSize
    const placement = describeHeavyKeeper(o, o.shared === undefined ? undefined : o.maxMembers)
    this.region = SharedRegion.forComponent(o.shared, placement.layout, o.namespace)
    // The front reads the sketch's words as the machine lays them out: little-endian ones only.
    const little = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1
    const served = o.shared === undefined && little && o.depth <= FRONT_MAX_DEPTH && FRONT_LITERALS_AGREE
    const frontMemory = served ? new Uint8Array(frontBytes(o.k, o.depth)) : undefined
    try {
      const config = nativeKeeperConfig(o, placement, this.region, this.region.member)
      this.keeper = new native.HeavyKeeper({ ...config, front: frontMemory })
    } catch (error) {
      this.region.close()
      throw error
    }
    // Native code laid the front's memory out (its entries start at a cache line it chose).
    this.front = frontMemory && new HeavyKeeperFront(this.region, { ...o, ...placement }, frontMemory)
    this.nativeAdd = this.keeper.add
  }

  /**
   * Counts `incr` (an integer in [0, 2^32 - 1], default 1) occurrences of `key`. Returns whether the key is in the
   * top-k afterwards. Costs the same whatever `incr` is. Never throws: a key that is not a string or a Uint8Array,
   * or a bad `incr`, counts nothing, returns false and is counted in stats().
   */
  add(key: K, incr = 1): boolean {
    const front = this.front
    if (front !== undefined && typeof key === 'string') {
      const served = front.add(key, incr)
      if (served >= 0) return served === 1
    }
    return this.addNative(key, incr)
  }

  /** `add` for each key of a batch, with one call into native code. Returns how many of them are in the top-k. */
  addMany(keys: readonly K[], incr = 1): number {
    if (!Array.isArray(keys)) throw new InvalidArgumentError('keys', keys, 'an array of strings or Uint8Arrays')
    checkIncr(incr)
    if (this.region.closed) return 0
    this.front?.flush()
    const result = this.keeper.addMany(keys as K[], incr)
    this.front?.forgetOutside() // the batch may have put any of its keys in the top-k
    this.drain()
    if (result < 0) {
      const index = -1 - result
      throw new InvalidArgumentError(
        `keys[${index}]`,
        keys[index],
        'a string or a Uint8Array (the keys before it were added)',
      )
    }
    return result
  }

  /** The top-k, count descending, ties by key ascending (byte order). Host-wide when shared. */
  list(): TopKItem<K>[] {
    this.front?.flush()
    const items = this.keeper.list(this.region.laneHighWater()) as TopKItem<K>[]
    this.drain()
    return items
  }

  /** The estimated count of one key (the sketch's count, at least its count in the top-k). */
  count(key: K): number {
    this.front?.flush()
    const count = this.keeper.count(key)
    if (count < 0) throw new InvalidArgumentError('key', key, 'a string or a Uint8Array')
    this.drain()
    return count
  }

  /** Sum of every increment (of every member when shared), halved by each fading. Reading it changes nothing. */
  get total(): number {
    return this.keeper.total(this.region.laneHighWater())
  }

  stats(): HeavyKeeperStats {
    return {
      k: this.k,
      keys: this.list().length,
      total: this.total,
      sketchBytes: this.sketchBytes,
      invalidArguments: this.invalidArguments,
      contentionTimeouts: this.keeper.contentionTimeouts(),
    }
  }

  /**
   * Halves every count: the sketch's, the top-k's and the total (host-wide when shared). Keys whose count drops
   * to 0 leave the top-k and are reported to `onExpelled`.
   */
  fading(): void {
    this.front?.flush()
    this.keeper.fading()
    this.drain()
  }

  /**
   * Fades unless this host already faded for `epoch` or a later one: a timer on each of N workers calling
   * `fadingOnce(Math.floor(now / period))` fades the shared sketch once per period, not N times. Returns whether
   * this call faded.
   */
  fadingOnce(epoch: number): boolean {
    // Safe integers only: the native side refuses 2^53 and above, which Number.isInteger accepts.
    if (!Number.isSafeInteger(epoch) || epoch < 0)
      throw new InvalidArgumentError('epoch', epoch, 'an integer in [0, 2^53 - 1]')
    this.front?.flush()
    const faded = this.keeper.fadeOnce(epoch)
    this.drain()
    return faded
  }

  /** Calls `listener` with each key that leaves the top-k (displaced, or faded to 0). None is dropped. */
  onExpelled(listener: (item: TopKItem<K>) => void): Disposable {
    const subscription = this.expelled.event(listener)
    this.keeper.collectExpelled(true)
    return toDisposable(() => {
      subscription.dispose()
      if (!this.expelled.hasListeners) this.keeper.collectExpelled(false)
    })
  }

  /** Detaches from the shared region (a local HeavyKeeper just stops counting). Later adds count nothing. */
  close(): void {
    this.front?.flush()
    this.front?.clear()
    this.front = undefined
    this.nativeAdd = closedAdd
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** The miss path of add, kept out of it so that add stays small enough to inline into its callers. */
  private addNative(key: K, incr: number): boolean {
    const front = this.front
    front?.flush()
    const result = this.nativeAdd(key, incr)
    if (front !== undefined && result >= 0) {
      if (typeof key === 'string') front.learn(key)
      else if ((result & 1) === 1) front.forgetOutside() // bytes of a key the front may hold as a string
    }
    if (result === 0) return false
    return result === 1 || this.settle(result)
  }

  private settle(result: number): boolean {
    if (result === 0) return false
    if (result === -1 || result === -2) {
      this.invalidArguments++
      return false
    }
    this.drain()
    return (result & 1) === 1
  }

  private drain(): void {
    if (!this.expelled.hasListeners) return
    for (const item of this.keeper.takeExpelled()) this.expelled.emit(item as TopKItem<K>)
  }
}
registerComponent('HeavyKeeper', HeavyKeeper)

function checkIncr(incr: unknown): void {
  if (typeof incr !== 'number' || !Number.isInteger(incr) || incr < 0 || incr > 0xffffffff) {
    throw new InvalidArgumentError('incr', incr, 'an integer in [0, 2^32 - 1]')
  }
}
