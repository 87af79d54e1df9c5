// A client minting fresh keys against a full table (docs/rules/keyed-table.md, "Who gives a slot up"), on a fake
// clock: established clients keep their limits, an exhausted key stays refused, new clients are served.
import { describe, expect, it } from 'vitest'

import { KeyedLimiter } from '../../lib/components/ratelimit/keyed-limiter'
import { ManualClock } from '../helpers/manual-clock'

interface Client {
  key: string
  /** ms between its requests */
  every: number
  from: number
  sent: number
  admitted: number
}

function clients(prefix: string, count: number, every: number, from: number): Client[] {
  return Array.from({ length: count }, (_, i) => ({ key: `${prefix}-${i}`, every, from, sent: 0, admitted: 0 }))
}

/**
 * Runs `seconds` of traffic in 10 ms steps: the attacker's `mintedPerStep` fresh keys each send `perKey` requests,
 * every client sends when its turn comes.
 */
function run(
  keyed: KeyedLimiter,
  clock: ManualClock,
  all: Client[],
  mintedPerStep: number,
  perKey: number,
  seconds: number,
) {
  let minted = 0
  let attackerAdmitted = 0
  const end = clock.time + seconds * 1000
  for (; clock.time < end; clock.advance(10)) {
    for (let i = 0; i < mintedPerStep; i++, minted++) {
      const key = `2001:db8:${(minted >>> 16).toString(16)}:${(minted & 0xffff).toString(16)}::/64`
      for (let r = 0; r < perKey; r++) if (keyed.tryAcquire(key)) attackerAdmitted++
    }
    for (const c of all) {
      if (clock.time < c.from || (clock.time - c.from) % c.every !== 0) continue
      c.sent++
      if (keyed.tryAcquire(c.key)) c.admitted++
    }
  }
  return { minted, attackerAdmitted }
}

const served = (group: Client[]) => group.reduce((s, c) => s + c.admitted, 0) / group.reduce((s, c) => s + c.sent, 0)

describe('KeyedLimiter table under a key-minting client', () => {
  // 50 requests/s per key, bursts of 100: a refill period (the burst's span) of 2 s. 2 000 slots.
  const rule = { rate: 50, burst: 100, maxKeys: 1000 }

  it('at 10x the capacity per refill period: established clients keep their limits, new ones are served', () => {
    const clock = new ManualClock(0)
    const keyed = new KeyedLimiter({ ...rule, now: clock.now })
    const established = clients('established', 300, 100, 0)
    const greedy = clients('greedy', 1, 5, 0) // 200 requests/s: over its limit
    run(keyed, clock, [...established, ...greedy], 0, 1, 1) // they are known before the attack
    const newcomers = clients('newcomer', 100, 100, 2000)
    // 20 000 fresh keys per 2 s (10x the table's 2 000 slots), one request each, for 6 s.
    const attack = run(keyed, clock, [...established, ...greedy, ...newcomers], 100, 1, 6)
    expect(attack.minted).toBe(60_000)
    expect(served(established)).toBe(1)
    expect(served(newcomers)).toBe(1)
    // The greedy key got its burst and its rate, never a fresh budget: 100 + 50 x 7 s at most.
    expect(greedy[0].admitted).toBeLessThanOrEqual(100 + 50 * 7 + 1)
    expect(greedy[0].admitted).toBeGreaterThanOrEqual(50 * 7)
    const s = keyed.stats()
    expect(s.size).toBeLessThanOrEqual(2000)
    expect(s.evicted).toBeGreaterThan(50_000) // the minted keys' slots, reused once they rested
    keyed.close()
  })

  it('flooded past its capacity: established and exhausted keys keep their limits, the overflow is bounded', () => {
    const clock = new ManualClock(0)
    const keyed = new KeyedLimiter({ ...rule, now: clock.now })
    const established = clients('established', 300, 100, 0)
    const greedy = clients('greedy', 1, 5, 0)
    run(keyed, clock, [...established, ...greedy], 0, 1, 1)
    // Each minted key spends its whole burst: every slot of the table is in debt for 2 s, 10x over.
    const attack = run(keyed, clock, [...established, ...greedy], 100, 100, 3)
    expect(served(established)).toBe(1)
    expect(greedy[0].admitted).toBeLessThanOrEqual(100 + 50 * 4 + 1)
    // Keys without a slot share the overflow: 10 keys' worth (bursts of 1 000, 500/s), never more.
    const t = keyed.stats().table!
    expect(t.overflowAdmitted).toBeLessThanOrEqual(1000 + 500 * 3 + 1)
    expect(t.overflowRefused).toBeGreaterThan(0)
    expect(attack.attackerAdmitted).toBeLessThan(attack.minted * 100)
    keyed.close()
  })
})
