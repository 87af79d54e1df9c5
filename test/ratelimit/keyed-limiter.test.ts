import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { KeyedLimiter } from '../../lib/components/ratelimit/keyed-limiter'
import type { Limiter } from '../../lib/components/ratelimit/limiter'
import { TokenBucket } from '../../lib/components/ratelimit/token-bucket'
import { ManualClock } from '../helpers/manual-clock'

function keyedBuckets(clock: ManualClock, options: { maxKeys?: number; idleTimeout?: number } = {}) {
  return new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 2, now: clock.now }), { ...options, now: clock.now })
}

describe('KeyedLimiter', () => {
  it('keeps one limiter per key, made on first use', () => {
    const clock = new ManualClock(0)
    const keyed = keyedBuckets(clock)
    expect(keyed.get('a')).toBe(keyed.get('a'))
    expect(keyed.get('a')).not.toBe(keyed.get('b'))
    expect([keyed.tryAcquire('a'), keyed.tryAcquire('a'), keyed.tryAcquire('a')]).toEqual([true, true, false])
    expect(keyed.tryAcquire('b', 2)).toBe(true)
    expect(keyed.stats()).toEqual({
      size: 2,
      maxKeys: 10_000,
      created: 2,
      evicted: 0,
      expired: 0,
      refused: 0,
      invalidArguments: 0,
    })
  })

  it('never holds more than maxKeys: the least recently used key at rest goes', () => {
    const clock = new ManualClock(0)
    const keyed = keyedBuckets(clock, { maxKeys: 2 })
    keyed.tryAcquire('a')
    keyed.tryAcquire('b')
    clock.advance(2000) // both refilled: at rest
    keyed.tryAcquire('a') // a is used again, b is not
    keyed.tryAcquire('c')
    expect(keyed.size).toBe(2)
    expect(keyed.has('a')).toBe(true)
    expect(keyed.has('b')).toBe(false)
    expect(keyed.stats().evicted).toBe(1)
    for (let i = 0; i < 1000; i++) keyed.get(`scan-${i}`) // get() takes nothing: every limiter stays at rest
    expect(keyed.size).toBe(2)
  })

  it('keeps an exhausted key until it is full again, then drops it once idle', () => {
    const clock = new ManualClock(0)
    const keyed = keyedBuckets(clock, { idleTimeout: 1000 })
    const first = keyed.get('a')
    expect([keyed.tryAcquire('a'), keyed.tryAcquire('a'), keyed.tryAcquire('a')]).toEqual([true, true, false])
    clock.advance(1500) // idle, but only 1.5 of its 2 tokens back
    keyed.get('other')
    expect(keyed.get('a')).toBe(first)
    clock.advance(2000)
    keyed.get('another')
    expect(keyed.has('a')).toBe(false)
    expect(keyed.get('a')).not.toBe(first) // a fresh limiter, as full as the one dropped
    expect(keyed.stats()).toMatchObject({ expired: 2, created: 4 })
  })

  it('retryAfterMs(key) is the limiter answer, or for a refused key, until an entry comes to rest', () => {
    const clock = new ManualClock(0)
    const keyed = keyedBuckets(clock, { maxKeys: 1 })
    expect(keyed.retryAfterMs('a')).toBe(0) // room for it
    keyed.tryAcquire('a', 2)
    expect(keyed.retryAfterMs('a')).toBe(1000)
    expect(keyed.tryAcquire('b')).toBe(false) // no room: a is refilling
    expect(keyed.retryAfterMs('b')).toBe(2000) // a is full again in 2 s
    expect(() => keyed.retryAfterMs('b', 0)).toThrow(InvalidArgumentError)
  })

  it('cleans idle keys as new keys arrive, without timers', () => {
    const clock = new ManualClock(0)
    const keyed = keyedBuckets(clock, { idleTimeout: 1000 })
    for (let i = 0; i < 100; i++) keyed.get(`old-${i}`)
    clock.advance(1001)
    for (let i = 0; i < 30; i++) keyed.get(`new-${i}`)
    expect(keyed.size).toBe(30)
    expect(keyed.stats().expired).toBe(100)
  })

  it('prune() removes idle keys at once; delete and close close the limiters they drop', () => {
    const clock = new ManualClock(0)
    const closed: string[] = []
    const keyed = new KeyedLimiter(
      (key): Limiter => ({
        tryAcquire: () => true,
        available: () => 1,
        retryAfterMs: () => 0,
        close: () => closed.push(key),
      }),
      { idleTimeout: 100, now: clock.now },
    )
    keyed.get('a')
    keyed.get('b')
    clock.advance(50)
    keyed.get('c')
    clock.advance(60)
    expect(keyed.prune()).toBe(2)
    expect(closed).toEqual(['a', 'b'])
    expect(keyed.delete('c')).toBe(true)
    expect(keyed.delete('c')).toBe(false)
    keyed.get('d')
    keyed.close()
    expect(closed).toEqual(['a', 'b', 'c', 'd'])
    expect(keyed.size).toBe(0)
  })

  it('rejects a bad factory, bad options and a key that is not a string', () => {
    expect(() => new KeyedLimiter(5 as never)).toThrow(/option `factory` must be a function/)
    expect(() => new KeyedLimiter(() => new TokenBucket({ rate: 1 }), { maxKeys: 0 })).toThrow(/option `maxKeys`/)
    expect(() => new KeyedLimiter(() => new TokenBucket({ rate: 1 }), { idleTimeout: 0 })).toThrow(
      /option `idleTimeout`/,
    )
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1 }))
    expect(() => keyed.get(42 as never)).toThrow(InvalidArgumentError)
  })
})
