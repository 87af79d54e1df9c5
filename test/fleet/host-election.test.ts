import { afterEach, describe, expect, it } from 'vitest'

import { FleetRegion } from '../../lib/foundation/live-rules/fleet-region'
import { HostElection } from '../../lib/ops/fleet/host-election'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'
import '../helpers/cleanup-regions'

const opened: FleetRegion[] = []
afterEach(() => opened.splice(0).forEach((r) => r.close()))

function members(n: number, clock: ManualClock): Array<{ region: FleetRegion; election: HostElection }> {
  const namespace = uniqueName('el')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-40)
  return Array.from({ length: n }, () => {
    const region = FleetRegion.open(namespace, 8)
    opened.push(region)
    return { region, election: new HostElection(region, clock.now, 3000) }
  })
}

describe('HostElection: one watcher per host', () => {
  it('the first member to look leads; the others follow while it ticks', () => {
    const clock = new ManualClock(1000)
    const [a, b, c] = members(3, clock)
    expect(a.election.tick()).toBe(true)
    for (let i = 0; i < 10; i++) {
      clock.advance(100)
      expect([a.election.tick(), b.election.tick(), c.election.tick()]).toEqual([true, false, false])
    }
  })

  it('a leader that leaves gives the lead up at once; one whose slot was freed (its process died) too', () => {
    const clock = new ManualClock(1000)
    const [a, b, c] = members(3, clock)
    a.election.tick()
    a.election.resign()
    expect(b.election.tick()).toBe(true)
    expect(c.election.tick()).toBe(false)
    // Detaching zeroes the member's lane, as the sampler's reaper does for a dead process (docs/architecture.md).
    b.region.close()
    expect(c.election.tick()).toBe(true)
    expect(a.election.tick()).toBe(false)
  })

  it('a leader whose loop stalled past staleAfter is replaced, and steps down when it looks again', () => {
    const clock = new ManualClock(1000)
    const [a, b] = members(2, clock)
    a.election.tick()
    clock.advance(2999)
    expect(b.election.tick()).toBe(false)
    clock.advance(2)
    expect(b.election.tick()).toBe(true)
    expect(a.election.leading).toBe(true) // it does not know yet
    expect(a.election.tick()).toBe(false)
    expect(a.election.leading).toBe(false)
    clock.advance(100)
    expect([a.election.tick(), b.election.tick()]).toEqual([false, true])
  })

  it('members racing for a free lead: exactly one wins', () => {
    const clock = new ManualClock(1000)
    const all = members(6, clock)
    all[0].election.tick()
    all[0].election.resign()
    const winners = all.slice(1).map((m) => m.election.tick())
    expect(winners.filter(Boolean)).toHaveLength(1)
  })
})
