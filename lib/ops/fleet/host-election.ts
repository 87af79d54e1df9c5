import type { FleetRegion } from '../../foundation/live-rules/fleet-region'

/**
 * Which member of the host watches the source (docs/readme/fleet.md, "One watcher per host"). The leader word holds
 * the leader's slot; the leader marks its lane (a heartbeat and a leading flag) at every tick. Its lane is
 * reclaimable: when its process dies, the sampler of any other member zeroes it within 200 ms (docs/architecture.md,
 * "Shared state"), and the next member to tick takes over by compare-and-swap. A leader whose heartbeat is older
 * than `staleAfter` (its event loop stopped) is taken over too. A leader that finds the word no longer its own steps
 * down at its next tick.
 */
export class HostElection {
  private leads = false

  constructor(
    private readonly region: FleetRegion,
    private readonly now: () => number,
    private readonly staleAfter: number,
  ) {}

  get leading(): boolean {
    return this.leads
  }

  /** Renews this member's mark if it leads, else takes over from a leader that is gone. Returns whether it leads. */
  tick(): boolean {
    const r = this.region
    const mine = r.member + 1
    const now = this.now()
    const word = Atomics.load(r.i32, r.leaderIndex)
    if (word === mine) {
      r.mark(now, true)
      this.leads = true
      return true
    }
    if (this.leads) {
      this.leads = false // taken over while this member's loop was held: another one watches now
      r.mark(now, false)
    }
    if (word !== 0 && this.alive(word - 1, now)) return false
    r.mark(now, true) // before the swap: a member that reads the word after it sees a live leader
    if (Atomics.compareExchange(r.i32, r.leaderIndex, word, mine) === word) {
      this.leads = true
      return true
    }
    r.mark(now, false)
    return false
  }

  /** Gives the lead up (close): another member takes over at its next tick. */
  resign(): void {
    const r = this.region
    if (this.leads) Atomics.compareExchange(r.i32, r.leaderIndex, r.member + 1, 0)
    this.leads = false
    r.mark(0, false)
  }

  /** Whether the member in `slot` is a leader that ticked recently. */
  private alive(slot: number, now: number): boolean {
    const r = this.region
    if (!(slot >= 0 && slot < r.lanes)) return false
    const beat = r.heartbeat(slot)
    return r.leading(slot) && beat > 0 && now - beat <= this.staleAfter
  }
}
