interface Entry<V> {
  value: V
  expiresAt: number
}

/**
 * A bounded least-recently-used map whose entries also expire. Times are plain ms numbers (exact integers up to
 * 2^53: no 32-bit wrap as in the reference, whose TTLs break after 49.7 days of uptime). A Map keeps insertion
 * order, so re-inserting on use makes its first key the least recently used.
 */
export class LruTtlCache<V> {
  readonly capacity: number
  private readonly entries = new Map<string, Entry<V>>()

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
      this.entries.delete(key)
      return undefined
    }
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** Stores `value` until `expiresAt`, evicting the least recently used entry when over capacity. */
  set(key: string, value: V, expiresAt: number): void {
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      this.entries.delete(key)
      entry.value = value
      entry.expiresAt = expiresAt
      this.entries.set(key, entry)
      return
    }
    this.entries.set(key, { value, expiresAt })
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string)
  }

  delete(key: string): boolean {
    return this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
