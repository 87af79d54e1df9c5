/** The most keys refused locally at once: memory stays bounded whatever keys requests bring. */
export const MAX_REFUSED_KEYS = 10_000

interface Refusal {
  /** Until when (local clock, ms) Redis would refuse this key... */
  until: number
  /** ...a decision of at least this many permits. */
  cost: number
}

/**
 * Keys Redis has just refused, refused here until Redis would admit them again (docs/readme/ratelimit.md, "Local
 * refusal"). Redis answered "wait R" for a decision it made at some moment after the call was sent; counting R from
 * the moment the call was sent ends the local refusal no later than Redis' own, so this only ever refuses what Redis
 * would have refused, and a hot abusive key costs about one Redis call per R per host.
 */
export class LocalRefusals {
  private readonly refusals = new Map<string, Refusal>()

  get size(): number {
    return this.refusals.size
  }

  /** Redis refused `cost` permits of `key` for `waitMs`, counted from `sentAt`. */
  refuse(key: string, cost: number, sentAt: number, waitMs: number): void {
    const refusals = this.refusals
    // The scripts round the wait up to the next µs: one µs less never outlasts Redis' own refusal.
    const until = sentAt + waitMs - 0.001
    const known = refusals.get(key)
    if (known !== undefined) {
      // Keep the insertion order roughly the order of expiry: the oldest entry is the first to drop.
      refusals.delete(key)
      known.until = until
      known.cost = cost
      refusals.set(key, known)
      return
    }
    if (refusals.size >= MAX_REFUSED_KEYS && !this.dropOldest(sentAt)) return // full of live refusals: ask Redis
    refusals.set(key, { until, cost })
  }

  /** Ms left before Redis could admit `cost` permits of `key`, or 0 when that is Redis' call to make. */
  waitMs(key: string, cost: number, now: number): number {
    const refusal = this.refusals.get(key)
    if (refusal === undefined) return 0
    if (now >= refusal.until) {
      this.refusals.delete(key)
      return 0
    }
    return cost >= refusal.cost ? refusal.until - now : 0
  }

  clear(): void {
    this.refusals.clear()
  }

  private dropOldest(now: number): boolean {
    for (const [key, refusal] of this.refusals) {
      if (refusal.until > now) return false
      this.refusals.delete(key)
      return true
    }
    return false
  }
}
