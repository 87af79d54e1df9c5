// KeyedPool: one eviction rule (keys at rest go first, least recently used first; a key not at rest is never
// dropped) and one meaning of has(), for KeyedLimiter, BreakerGroup and BulkheadPool alike (docs/vocabulary.md).
import { describe, expect, it } from 'vitest'

import { CircuitBreaker, KeyedLimiter, KeyedPool, type PoolMember, TokenBucket } from '../../lib/index'
import { BreakerGroup } from '../../lib/components/breakers/breaker-group'
import { ManualClock } from '../helpers/manual-clock'
import { fieldOf } from '../helpers/typed-errors'

/** A member whose rest the test decides. */
class Member implements PoolMember {
  restsIn = 0
  closed = false
  constructor(readonly key: string) {}
  close(): void {
    this.closed = true
  }
}

function pool(maxKeys: number, clock: ManualClock, idleTimeout = 60_000) {
  const made: Member[] = []
  const p = new KeyedPool<Member>(
    (key) => {
      const m = new Member(key)
      made.push(m)
      return m
    },
    { maxKeys, idleTimeout, now: clock.now, timeToRest: (m) => m.restsIn },
  )
  return { p, made }
}

describe('KeyedPool', () => {
  it('drops the least recently used key at rest to make room, never one that is not at rest', () => {
    const clock = new ManualClock(0)
    const { p } = pool(3, clock)
    const a = p.get('a') as Member
    a.restsIn = 500 // busy for another 500 ms
    for (const key of ['b', 'c']) {
      clock.advance(1)
      p.get(key)
    }
    clock.advance(1)
    p.get('b') // b used again: c is now the least recently used key at rest
    p.get('d')
    expect([p.has('a'), p.has('b'), p.has('c'), p.has('d')]).toEqual([true, true, false, true])
    expect(a.closed).toBe(false)
    expect(p.stats()).toMatchObject({ size: 3, created: 4, evicted: 1, refused: 0 })
  })

  it('refuses a new key when every key it looks at is busy, and says when one comes to rest', () => {
    const clock = new ManualClock(0)
    const { p, made } = pool(4, clock)
    for (const key of ['a', 'b', 'c', 'd']) (p.get(key) as Member).restsIn = 1000
    made[2].restsIn = 300
    expect(p.get('e')).toBeUndefined()
    expect(p.has('e')).toBe(false)
    expect(p.stats()).toMatchObject({ size: 4, refused: 1, evicted: 0 })
    expect(p.retryAfterMs()).toBe(300)
    clock.advance(100)
    expect(p.retryAfterMs()).toBe(200)
    made[2].restsIn = 0 // c came to rest
    expect(p.get('e')).toBeInstanceOf(Member)
    expect(p.has('c')).toBe(false)
    expect(p.retryAfterMs()).toBe(0)
  })

  it('bounds the work of a new key in a pool full of busy keys (a fixed number looked at, not the pool)', () => {
    const clock = new ManualClock(0)
    let looked = 0
    const p = new KeyedPool<Member>((key) => new Member(key), {
      maxKeys: 10_000,
      now: clock.now,
      timeToRest: () => {
        looked++
        return Infinity
      },
    })
    for (let i = 0; i < 10_000; i++) p.get(`k${i}`)
    looked = 0
    for (let i = 0; i < 1000; i++) expect(p.get(`new${i}`)).toBeUndefined()
    expect(looked / 1000).toBeLessThanOrEqual(8)
    expect(p.size).toBe(10_000)
    expect(p.retryAfterMs()).toBe(Infinity)
  })

  it('drops idle keys at rest as new keys come, keeps idle keys that are busy', () => {
    const clock = new ManualClock(0)
    const { p } = pool(100, clock, 1000)
    const busy = p.get('busy') as Member
    busy.restsIn = 10_000
    p.get('idle')
    clock.advance(1000)
    p.get('fresh')
    expect([p.has('busy'), p.has('idle'), p.has('fresh')]).toEqual([true, false, true])
    expect(p.stats().expired).toBe(1)
    clock.advance(1000)
    expect(p.prune()).toBe(1) // fresh is idle and at rest now; busy still is not at rest
    expect(p.keys()).toEqual(['busy'])
  })

  it('has(key) is true exactly when get(key) returns the existing entry, idle or not', () => {
    const clock = new ManualClock(0)
    const { p } = pool(10, clock, 100)
    const a = p.get('a')
    clock.advance(10_000)
    expect(p.has('a')).toBe(true)
    expect(p.get('a')).toBe(a)
    expect(p.stats().created).toBe(1)
  })

  it('validates its options and keys, naming the field', () => {
    expect(fieldOf(() => new KeyedPool(() => new Member('x'), { maxKeys: 0 }))).toBe('maxKeys')
    expect(fieldOf(() => new KeyedPool(() => new Member('x'), { timeToRest: 5 as never }))).toBe('timeToRest')
    expect(fieldOf(() => new KeyedPool(42 as never))).toBe('factory')
    expect(() => new KeyedPool(() => new Member('x')).get(5 as never)).toThrow(/argument `key`/)
  })
})

describe('KeyedLimiter under a key-cycling attacker', () => {
  it('an attacker cycling 10 000 keys does not reset his own exhausted key, and memory stays bounded', () => {
    const clock = new ManualClock(0)
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 5, now: clock.now }), {
      maxKeys: 1000,
      now: clock.now,
    })
    for (let i = 0; i < 5; i++) expect(keyed.tryAcquire('attacker')).toBe(true)
    expect(keyed.tryAcquire('attacker')).toBe(false)
    let maxSize = 0
    for (let i = 0; i < 10_000; i++) {
      clock.advance(0.01) // 10 000 requests in 100 ms
      keyed.tryAcquire(`cycle-${i}`)
      maxSize = Math.max(maxSize, keyed.size)
    }
    expect(keyed.tryAcquire('attacker')).toBe(false) // still exhausted: no fresh burst for him
    expect(maxSize).toBeLessThanOrEqual(1000)
    // Keys that took a token are not at rest until they refill: past the bound, new keys were refused.
    expect(keyed.stats()).toMatchObject({ size: 1000, refused: 10_000 - 999 })
    expect(keyed.retryAfterMs('someone-new')).toBeGreaterThan(0)
    // Once the cycled keys have refilled (1 s), new keys are served again, and the attacker's key gets its share.
    clock.advance(1000)
    expect(keyed.tryAcquire('someone-new')).toBe(true)
    expect(keyed.tryAcquire('attacker')).toBe(true)
  })

  it('keys at rest make room at once: a steady churn of well-behaved keys is never refused', () => {
    const clock = new ManualClock(0)
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 10, burst: 1, now: clock.now }), {
      maxKeys: 100,
      now: clock.now,
    })
    for (let i = 0; i < 5000; i++) {
      clock.advance(1) // one new key per ms; each bucket refills in 100 ms
      expect(keyed.tryAcquire(`client-${i}`)).toBe(true)
    }
    expect(keyed.stats()).toMatchObject({ size: 100, refused: 0 })
  })
})

describe('BreakerGroup', () => {
  it('never drops a breaker that is open, and refuses a new key while every breaker it looks at is', () => {
    const clock = new ManualClock(0)
    const group = new BreakerGroup(() => new CircuitBreaker({ minimumCalls: 1, now: clock.now }), {
      maxKeys: 2,
      now: clock.now,
    })
    for (const key of ['down-1', 'down-2']) (group.get(key) as CircuitBreaker).recordFailure()
    expect(group.get('down-1')?.state).toBe('open')
    expect(group.get('new-host')).toBeUndefined()
    expect(group.stats()).toMatchObject({ size: 2, refused: 1 })
    const closed = group.get('down-2') as CircuitBreaker
    clock.advance(5000)
    expect(closed.tryAcquire()).toBe(true) // a half-open probe...
    closed.recordSuccess() // ...that passes: closed, at rest
    expect(group.get('new-host')).toBeDefined()
    expect(group.has('down-1')).toBe(true)
    expect(group.has('down-2')).toBe(false)
  })
})
