import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { InvalidOptionError } from '../errors/invalid-option-error'
import type { Clock } from '../signals/clock'
import { checkFunction, checkOptions, optionalFunction } from '../common/validate'
import { keySharedName } from './key-shared-name'
import { type KeyedOptions, resolveKeyedOptions } from './keyed-options'

/** What a pool holds: any component with close(); one with a `shared` name is checked against its key's. */
export interface PoolMember {
  readonly shared?: string | undefined
  close(): void
}

/**
 * Makes the component of one key. `shared` is the key's own shared name when the pool is shared (pass it to the
 * component's `shared` option), else undefined.
 */
export type KeyedFactory<T> = (key: string, shared: string | undefined) => T

export interface KeyedPoolOptions<T> extends KeyedOptions {
  /**
   * Milliseconds until `entry` is at rest: 0 when it is (a fresh component would do exactly what it does), Infinity
   * when that cannot be known. An entry that is not at rest is never dropped to make room, so that its key never
   * gets a fresh start (default: always at rest, a plain least-recently-used pool).
   */
  timeToRest?: (entry: T) => number
}

/** Counters of a KeyedPool. */
export interface KeyedPoolStats {
  /** Keys held now. */
  size: number
  maxKeys: number
  /** Components made (first sight of a key, or its return after it was dropped). */
  created: number
  /** Keys at rest dropped to make room for a new key. */
  evicted: number
  /** Keys at rest dropped because they were idle. */
  expired: number
  /** New keys refused because the pool was full of keys not at rest. */
  refused: number
}

interface Entry<T> {
  value: T
  usedAt: number
  /** When the entry last moved to the back of the order. */
  movedAt: number
}

// Idle keys looked at from the front on each new key: a few, so that a new key stays cheap, yet more than one, so
// that the pool shrinks faster than it grows once keys go idle.
const SWEEP = 4
// Keys looked at from the front for one at rest when the pool is full: bounded, so that a pool full of keys that
// are not at rest (an attacker cycling keys) costs each new key a fixed amount of work, not a walk of the pool.
const SCAN = 8

const alwaysAtRest = (): number => 0

/**
 * A bounded set of per-key components (docs/vocabulary.md, "Keyed collections"), made on first use. Memory never
 * grows past `maxKeys`: when a new key needs room, keys at rest go first, least recently used first (idle ones
 * before any other); a key that is not at rest is never dropped, so that nobody can give his own exhausted key a
 * fresh start by cycling through other keys. When every key looked at is busy, the new key is refused: `get`
 * returns undefined and the caller treats the key as limited (`retryAfterMs()` says when an entry comes to rest).
 *
 * A hit is one Map look-up and one store (a second-chance order: a key used since it last moved goes to the back
 * when the front is examined, instead of on every use). `has(key)` is true exactly when `get(key)` returns the
 * existing entry.
 */
export class KeyedPool<T extends PoolMember> {
  readonly maxKeys: number
  readonly idleTimeout: number
  readonly shared: string | undefined
  private readonly factory: KeyedFactory<T>
  // Typed loosely: a parameter of type T would make KeyedPool<SreBreaker> unassignable to KeyedPool<Breaker>.
  private readonly timeToRest: (entry: any) => number
  private readonly now: Clock
  private readonly entries = new Map<string, Entry<T>>()
  private readonly sharedNames = new Set<string>()
  private readonly counts = { created: 0, evicted: 0, expired: 0, refused: 0 }
  private readonly scanned: string[] = []
  /** After a refusal: when the soonest busy key looked at comes to rest. */
  private restAt = 0

  constructor(factory: KeyedFactory<T>, options?: KeyedPoolOptions<T>, defaultMaxKeys?: number) {
    this.factory = checkFunction<KeyedFactory<T>>('factory', factory)
    const o = checkOptions<KeyedPoolOptions<T>>(options, 'options')
    const resolved = resolveKeyedOptions(o, defaultMaxKeys)
    this.maxKeys = resolved.maxKeys
    this.idleTimeout = resolved.idleTimeout
    this.shared = resolved.shared
    this.now = resolved.now
    this.timeToRest = optionalFunction<(entry: T) => number>('timeToRest', o.timeToRest) ?? alwaysAtRest
  }

  /** The component of `key`, made now if the key is new; undefined when the pool is full of keys not at rest. */
  get(key: string): T | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return this.create(key)
    entry.usedAt = this.now()
    return entry.value
  }

  /** The component of `key` if the pool holds one, without counting a use and without making one. */
  peek(key: string): T | undefined {
    return this.entries.get(key)?.value
  }

  has(key: string): boolean {
    return this.entries.has(key)
  }

  /** Drops `key` and closes its component. */
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

  /** Calls `fn` with each key's component, without counting as a use (for metrics and diagnostics). */
  forEach(fn: (value: T, key: string) => void): void {
    for (const [key, entry] of this.entries) fn(entry.value, key)
  }

  /**
   * Milliseconds until a new key can be made: 0 while there is room; after a refusal, until the soonest busy key
   * looked at comes to rest (Infinity when none can say).
   */
  retryAfterMs(): number {
    if (this.entries.size < this.maxKeys) return 0
    const wait = this.restAt - this.now()
    return wait > 0 ? wait : 0
  }

  /** Drops every idle key at rest now; returns how many. Not needed for bounded memory, which holds without it. */
  prune(): number {
    const now = this.now()
    let removed = 0
    for (const [key, entry] of this.entries) {
      if (now - entry.usedAt >= this.idleTimeout && this.timeToRest(entry.value) <= 0) {
        this.drop(key, entry)
        removed++
      }
    }
    this.counts.expired += removed
    return removed
  }

  stats(): KeyedPoolStats {
    return { size: this.entries.size, maxKeys: this.maxKeys, ...this.counts }
  }

  /** Drops every key and closes its component (a later get() starts afresh). Idempotent. */
  close(): void {
    for (const [key, entry] of this.entries) this.drop(key, entry)
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private create(key: string): T | undefined {
    if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
    const now = this.now()
    this.sweep(now)
    if (this.entries.size >= this.maxKeys && !this.evictOne(now)) {
      this.counts.refused++
      return undefined
    }
    const shared = this.shared === undefined ? undefined : keySharedName(this.shared, key)
    const value = this.factory(key, shared)
    this.checkMember(value, shared)
    this.entries.set(key, { value, usedAt: now, movedAt: now })
    if (value.shared !== undefined) this.sharedNames.add(value.shared)
    this.counts.created++
    return value
  }

  /** Drops idle keys at rest from the front, a few at a time; idle keys not at rest go to the back. */
  private sweep(now: number): void {
    let budget = SWEEP
    const scanned = this.scanned
    scanned.length = 0
    for (const [key, entry] of this.entries) {
      if (budget-- === 0 || now - entry.usedAt < this.idleTimeout) break
      if (this.timeToRest(entry.value) <= 0) {
        this.drop(key, entry)
        this.counts.expired++
      } else {
        scanned.push(key)
      }
    }
    this.rotate(scanned, now)
  }

  /**
   * Drops the least recently used key at rest among the first SCAN; keys used since they last moved and keys not at
   * rest go to the back. Returns false, noting when the soonest of them comes to rest, when none is at rest.
   */
  private evictOne(now: number): boolean {
    const scanned = this.scanned
    scanned.length = 0
    let victim: string | undefined
    let secondChance: string | undefined
    let soonest = Infinity
    for (const [key, entry] of this.entries) {
      if (scanned.length === SCAN) break
      const wait = this.timeToRest(entry.value)
      if (wait <= 0) {
        if (entry.usedAt <= entry.movedAt) {
          victim = key
          break
        }
        // At rest but used since it last moved: evicted only if nothing older at rest turns up.
        if (secondChance === undefined) secondChance = key
      } else if (wait < soonest) {
        soonest = wait
      }
      scanned.push(key)
    }
    victim ??= secondChance
    if (victim !== undefined) {
      this.drop(victim, this.entries.get(victim) as Entry<T>)
      this.counts.evicted++
      this.restAt = 0
    } else {
      this.restAt = now + soonest
    }
    this.rotate(scanned, now)
    return victim !== undefined
  }

  /** Moves `keys` (those still held) to the back of the order. */
  private rotate(keys: string[], now: number): void {
    for (const key of keys) {
      const entry = this.entries.get(key)
      if (entry === undefined) continue
      this.entries.delete(key)
      entry.movedAt = now
      this.entries.set(key, entry)
    }
  }

  private drop(key: string, entry: Entry<T>): void {
    this.entries.delete(key)
    const shared = entry.value.shared
    if (shared !== undefined) this.sharedNames.delete(shared)
    entry.value.close()
  }

  private checkMember(value: T, shared: string | undefined): void {
    if (value === null || typeof value !== 'object' || typeof value.close !== 'function') {
      throw new InvalidOptionError('factory', value, 'a function returning a component (an object with close())')
    }
    let problem: string | undefined
    if (shared !== undefined && value.shared !== shared) {
      problem = `a function that passes its second argument as the component's \`shared\` option ("${shared}")`
    } else if (shared === undefined && value.shared !== undefined && this.sharedNames.has(value.shared)) {
      problem = `a function giving each key its own shared name ("${value.shared}" is already another key's; set the pool's \`shared\` option)`
    }
    if (problem === undefined) return
    value.close()
    throw new InvalidOptionError('factory', value.shared, problem)
  }
}
