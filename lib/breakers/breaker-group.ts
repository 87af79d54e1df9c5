import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { InvalidOptionError } from '../errors/invalid-option-error'
import { resolveKeyedOptions } from '../shared/keyed-options'
import type { Clock } from '../signals/clock'
import { checkFunction, checkOptions } from '../validate'
import { keySharedName } from './breaker-names'

/** What a group holds: any breaker (SreBreaker, CircuitBreaker, or your own with the same two members). */
export interface GroupMember {
  readonly shared: string | undefined
  close(): void
}

/**
 * Makes the breaker of one key. `shared` is the key's own shared name when the group is shared (pass it to the
 * breaker's `shared` option), else undefined.
 */
export type BreakerFactory<B> = (key: string, shared: string | undefined) => B

export interface BreakerGroupOptions {
  /** Most keys held at once; past it the least recently used key is dropped (default 1000). */
  maxKeys?: number
  /** A key unused for this long (ms) is dropped, and starts afresh if it comes back (default 60 000). */
  idleTimeout?: number
  /** Share every key's breaker across the host: key k gets the shared name `<shared>.<k, made safe>.<hash of k>`. */
  shared?: string
  /** Monotonic clock, ms (default: the coarse clock). */
  now?: Clock
}

interface Entry<B> {
  breaker: B
  usedAt: number
  /** When the entry last moved to the back of the eviction order. */
  movedAt: number
}

/**
 * One breaker per key (a downstream, a route, a host), made on first use. Bounded without timers: idle keys and,
 * past `maxKeys`, the least recently used ones are dropped (and their breakers closed) when a new key arrives, so a
 * key per URL cannot grow memory without end. A hit is one Map look-up and one store.
 */
export class BreakerGroup<B extends GroupMember> {
  readonly shared: string | undefined
  private readonly factory: BreakerFactory<B>
  private readonly maxKeys: number
  private readonly idleTimeout: number
  private readonly now: Clock
  // Insertion order is the eviction order (second chance: a key used since it last moved goes to the back).
  private readonly entries = new Map<string, Entry<B>>()
  private readonly sharedNames = new Set<string>()

  constructor(factory: BreakerFactory<B>, options?: BreakerGroupOptions) {
    this.factory = checkFunction<BreakerFactory<B>>('factory', factory)
    const o = resolveKeyedOptions(checkOptions<BreakerGroupOptions>(options, 'options'))
    this.maxKeys = o.maxKeys
    this.idleTimeout = o.idleTimeout
    this.now = o.now
    this.shared = o.shared
  }

  /** The breaker of `key`, made now if the key is new or was dropped. */
  get(key: string): B {
    const now = this.now()
    const entry = this.entries.get(key)
    if (entry !== undefined && now - entry.usedAt < this.idleTimeout) {
      entry.usedAt = now
      return entry.breaker
    }
    return this.create(key, entry, now)
  }

  has(key: string): boolean {
    return this.entries.has(key)
  }

  /** Drops `key` and closes its breaker. */
  delete(key: string): boolean {
    const entry = this.entries.get(key)
    if (entry === undefined) return false
    this.drop(key, entry)
    return true
  }

  get size(): number {
    return this.entries.size
  }

  keys(): string[] {
    return [...this.entries.keys()]
  }

  /** Calls `fn` with each key's breaker, without counting as a use (for metrics and diagnostics). */
  forEach(fn: (breaker: B, key: string) => void): void {
    for (const [key, entry] of this.entries) fn(entry.breaker, key)
  }

  /** Drops every key and closes every breaker. Idempotent. */
  close(): void {
    for (const [key, entry] of this.entries) this.drop(key, entry)
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private create(key: string, stale: Entry<B> | undefined, now: number): B {
    if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
    if (stale !== undefined) this.drop(key, stale)
    this.makeRoom(now)
    const shared = this.shared === undefined ? undefined : keySharedName(this.shared, key)
    const breaker = this.factory(key, shared)
    this.checkMember(breaker, shared)
    this.entries.set(key, { breaker, usedAt: now, movedAt: now })
    if (breaker.shared !== undefined) this.sharedNames.add(breaker.shared)
    return breaker
  }

  /** Drops idle keys from the front, and the least recently used ones until a new key fits. */
  private makeRoom(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.usedAt >= this.idleTimeout) {
        this.drop(key, entry)
      } else if (this.entries.size < this.maxKeys) {
        break
      } else if (entry.usedAt > entry.movedAt) {
        // Used since it last moved: a second chance at the back (the walk meets it again only if all had one).
        this.entries.delete(key)
        entry.movedAt = now
        this.entries.set(key, entry)
      } else {
        this.drop(key, entry)
      }
    }
  }

  private drop(key: string, entry: Entry<B>): void {
    this.entries.delete(key)
    if (entry.breaker.shared !== undefined) this.sharedNames.delete(entry.breaker.shared)
    entry.breaker.close()
  }

  private checkMember(breaker: B, shared: string | undefined): void {
    if (breaker === null || typeof breaker !== 'object' || typeof breaker.close !== 'function') {
      throw new InvalidOptionError('factory', breaker, 'a function returning a breaker (an object with close())')
    }
    let problem: string | undefined
    if (shared !== undefined && breaker.shared !== shared) {
      problem = `a function that passes its second argument as the breaker's \`shared\` option ("${shared}")`
    } else if (shared === undefined && breaker.shared !== undefined && this.sharedNames.has(breaker.shared)) {
      problem = `a function giving each key its own shared name ("${breaker.shared}" is already another key's; set the group's \`shared\` option)`
    }
    if (problem === undefined) return
    breaker.close()
    throw new InvalidOptionError('factory', breaker.shared, problem)
  }
}
