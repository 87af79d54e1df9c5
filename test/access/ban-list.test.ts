// Bans (docs/rules/access-lists.md, "Bans"): `after` refusals close together ban a key for `duration`, counted in
// keyed tables; host-wide when shared; a key that finds no slot is never banned.
import { afterEach, describe, expect, it } from 'vitest'

import { BanList } from '../../lib/index'
import '../helpers/cleanup-regions'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

const lists: BanList[] = []
const make = (options: ConstructorParameters<typeof BanList>[0]) => {
  const list = new BanList(options)
  lists.push(list)
  return list
}
afterEach(() => lists.splice(0).forEach((l) => l.close()))

describe('BanList', () => {
  it('bans a key at its after-th refusal close together, for duration, then lets it go', () => {
    const clock = new ManualClock(1000)
    const bans = make({ after: 3, window: 60_000, duration: 10_000, now: clock.now })
    expect(bans.strike('a')).toBe(false)
    expect(bans.strike('a')).toBe(false)
    expect(bans.bannedMs('a')).toBe(0)
    expect(bans.strike('a')).toBe(true)
    expect(bans.bannedMs('a')).toBeCloseTo(10_000, 0)
    expect(bans.bannedMs('b')).toBe(0)
    expect(bans.strike('a')).toBe(false) // banned already: the ban runs its course, not extended
    clock.advance(9_000)
    expect(bans.bannedMs('a')).toBeCloseTo(1000, 0)
    clock.advance(1_001)
    expect(bans.bannedMs('a')).toBe(0)
    expect(bans.stats()).toMatchObject({
      after: 3,
      window: 60_000,
      duration: 10_000,
      bans: 1,
      strikes: 4,
      unrecorded: 0,
    })
  })

  it('forgets refusals at after per window: a trickle below that pace is never banned, a faster one is', () => {
    const clock = new ManualClock(0)
    const bans = make({ after: 3, window: 3000, duration: 10_000, now: clock.now })
    for (let i = 0; i < 20; i++) {
      expect(bans.strike('slow'), `refusal ${i}`).toBe(false)
      clock.advance(1100) // a little slower than 3 per 3 s
    }
    // Twice that pace: two refusals close together, and the one refilled meanwhile, then the ban.
    const outcomes: boolean[] = []
    for (let i = 0; i < 4; i++, clock.advance(500)) outcomes.push(bans.strike('fast'))
    expect(outcomes).toEqual([false, false, false, true])
  })

  it('after: 1 bans at the first refusal; ban() bans at once', () => {
    const clock = new ManualClock(0)
    const bans = make({ after: 1, duration: 5000, now: clock.now })
    expect(bans.strike('x')).toBe(true)
    expect(bans.ban('y')).toBe(true)
    expect(bans.ban('y')).toBe(false)
    expect(bans.bannedMs('y')).toBeCloseTo(5000, 0)
  })

  it('is one list for the host when shared: a ban by one member holds in the other', () => {
    const clock = new ManualClock(0)
    const shared = uniqueName('bans')
    const a = make({ shared, after: 2, duration: 60_000, now: clock.now })
    const b = make({ shared, after: 2, duration: 60_000, now: clock.now })
    expect(a.strike('client')).toBe(false)
    expect(b.strike('client')).toBe(true) // the two refusals were counted by two members
    expect(a.bannedMs('client')).toBeGreaterThan(59_000)
    expect(a.stats()).toMatchObject({ bans: 1, strikes: 2 })
  })

  it('never bans a key that finds no slot: a flood of keys cannot ban the innocent', () => {
    const clock = new ManualClock(0)
    const bans = make({ after: 1, duration: 60_000, maxKeys: 8, now: clock.now })
    let banned = 0
    for (let i = 0; i < 1000; i++) if (bans.strike(`attacker-${i}`)) banned++
    expect(banned).toBeLessThanOrEqual(16) // the slots: twice maxKeys
    expect(bans.stats().unrecorded).toBe(1000 - banned)
    for (let i = 0; i < 100; i++) expect(bans.bannedMs(`innocent-${i}`)).toBe(0)
  })

  it('refuses bad options, naming them', () => {
    expect(() => make({ after: 0 })).toThrow(/after/)
    expect(() => make({ window: 10 })).toThrow(/window/)
    expect(() => make({ duration: -1 })).toThrow(/duration/)
    expect(() => make({ maxKeys: 0 })).toThrow(/maxKeys/)
  })
})
