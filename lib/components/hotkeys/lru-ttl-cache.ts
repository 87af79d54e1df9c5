interface Entry<V> {
  key: string
  value: V
  expiresAt: number
  newer: Entry<V> | undefined
  older: Entry<V> | undefined
}

/**
 * A bounded least-recently-used map whose entries also expire. Times are plain ms numbers (exact integers up to
 * 2^53: no 32-bit wrap as in the reference, whose TTLs break after 49.7 days of uptime).
 *
 * Recency is a doubly linked list beside a Map: a hit relinks one entry (re-inserting into the Map on every hit,
 * the shorter way, leaves deleted slots that V8 must compact, several times slower).
 */
export class LruTtlCache<V> {
  readonly capacity: number
  private readonly entries = new Map<string, Entry<V>>()
  private newest: Entry<V> | undefined
  private oldest: Entry<V> | undefined

  constructor(capacity: number) {
    this.capacity = capacity
  }

  get size(): number {
    return this.entries.size
  }

  /** The value if present and not expired at `now` (an expired entry is removed); marks it most recently used. */
  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      this.remove(entry)
      return undefined
    }
    if (entry !== this.newest) {
      this.unlink(entry)
      this.linkNewest(entry)
    }
    return entry.value
  }

  /** Stores `value` until `expiresAt`, evicting the least recently used entry when over capacity. */
  set(key: string, value: V, expiresAt: number): void {
    let entry = this.entries.get(key)
    if (entry !== undefined) {
      this.unlink(entry)
    } else if (this.entries.size >= this.capacity && this.oldest !== undefined) {
      // Reuse the evicted entry's object: a full cache allocates nothing.
      entry = this.oldest
      this.unlink(entry)
      this.entries.delete(entry.key)
      entry.key = key
      this.entries.set(key, entry)
    } else {
      entry = { key, value, expiresAt, newer: undefined, older: undefined }
      this.entries.set(key, entry)
    }
    entry.value = value
    entry.expiresAt = expiresAt
    this.linkNewest(entry)
  }

  delete(key: string): boolean {
    const entry = this.entries.get(key)
    if (entry === undefined) return false
    this.remove(entry)
    return true
  }

  clear(): void {
    this.entries.clear()
    this.newest = undefined
    this.oldest = undefined
  }

  private remove(entry: Entry<V>): void {
    this.unlink(entry)
    this.entries.delete(entry.key)
  }

  private unlink(entry: Entry<V>): void {
    if (entry.newer === undefined) this.newest = entry.older
    else entry.newer.older = entry.older
    if (entry.older === undefined) this.oldest = entry.newer
    else entry.older.newer = entry.newer
    entry.newer = undefined
    entry.older = undefined
  }

  private linkNewest(entry: Entry<V>): void {
    entry.older = this.newest
    if (this.newest !== undefined) this.newest.newer = entry
    this.newest = entry
    if (this.oldest === undefined) this.oldest = entry
  }
}
