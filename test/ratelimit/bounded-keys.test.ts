// Keys from requests cost bounded memory (issue 13 item 7, docs/guide/trust.md): KeyedLimiter keeps a long key as a
// prefix and a hash. Measured: 10 000 keys of 6 KB grew the heap by 70 MB before, 20 MB now (18 MB with short keys).
import { setFlagsFromString } from 'v8'
import { runInNewContext } from 'vm'
import { describe, expect, it } from 'vitest'

import { BreakerGroup, BulkheadPool, KeyedLimiter, SreBreaker, TokenBucket } from '../../lib/index'
import { boundedKey, MAX_KEY_LENGTH } from '../../lib/foundation/common/bounded-key'

const bucket = () => new TokenBucket({ rate: 0.001, burst: 1, now: () => 0 })

describe('KeyedLimiter with keys from requests', () => {
  it('keeps a long key as a prefix and a hash: the same key is one limiter, keys differing anywhere are two', () => {
    const seen: string[] = []
    const limiter = new KeyedLimiter((key) => (seen.push(key), bucket()))
    const long = 'u'.repeat(5000)
    expect(limiter.tryAcquire(`${long}-a`)).toBe(true)
    expect(limiter.tryAcquire(`${long}-a`)).toBe(false) // the same client, its limit spent
    expect(limiter.tryAcquire(`${long}-b`)).toBe(true) // another client, differing only past the prefix
    expect(limiter.has(`${long}-a`)).toBe(true)
    expect(limiter.tryAcquire('short')).toBe(true)
    expect(seen.map((k) => k.length)).toEqual([64 + 1 + 22, 64 + 1 + 22, 5])
    expect(seen[0].startsWith('u'.repeat(64))).toBe(true)
    expect(limiter.delete(`${long}-b`)).toBe(true)
    expect(limiter.size).toBe(2)
  })

  it('10 000 keys of 6 KB take a few MB, not the 60 MB of their text', () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const limiter = new KeyedLimiter(bucket, { maxKeys: 10_000 })
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 10_000; i++) limiter.tryAcquire(Buffer.from(String(i).padEnd(6 * 1024, 'k')).toString())
    gc()
    const grown = (process.memoryUsage().heapUsed - before) / 1e6
    expect(limiter.size).toBe(10_000)
    expect(grown).toBeLessThan(40) // before: about 70 (the keys themselves), now about 20 (the limiters)
    limiter.close()
  })

  it('boundedKey: short keys unchanged; the prefix is a copy, not a view of the long key', () => {
    expect(boundedKey('x'.repeat(MAX_KEY_LENGTH))).toBe('x'.repeat(MAX_KEY_LENGTH))
    const long = `${'é'.repeat(100)}\ud800${'z'.repeat(100)}`
    const bounded = boundedKey(long)
    expect(bounded).toMatch(/^é{64}#[A-Za-z0-9_-]{22}$/)
    expect(boundedKey(long)).toBe(bounded)
    expect(boundedKey(`${long}!`)).not.toBe(bounded)
  })
})

// Issue 32, item 9: a BreakerGroup (keyed by route or host, which can come from requests) and a BulkheadPool (by
// origin) kept keys whole: a megabyte key was a megabyte held for as long as its breaker lived.
describe('BreakerGroup and BulkheadPool with keys from requests', () => {
  it('keep a long key as a prefix and a hash, as KeyedLimiter does', () => {
    const seen: string[] = []
    const group = new BreakerGroup((key) => (seen.push(key), new SreBreaker()))
    const pool = new BulkheadPool()
    const long = 'h'.repeat(1_000_000)
    for (const suffix of ['-a', '-b', '-a']) {
      expect(group.get(`${long}${suffix}`)).toBeDefined()
      expect(pool.get(`${long}${suffix}`)).toBeDefined()
    }
    expect(seen.map((k) => k.length)).toEqual([64 + 1 + 22, 64 + 1 + 22]) // before: 1 000 002, twice
    expect(group.keys()).toEqual(seen)
    expect(group.has(`${long}-a`)).toBe(true)
    expect(pool.has(`${long}-b`)).toBe(true)
    expect(pool.size).toBe(2)
    pool.forEach((_bulkhead, upstream) => expect(upstream.length).toBe(64 + 1 + 22))
    expect(group.delete(`${long}-b`)).toBe(true)
    expect(group.size).toBe(1)
    group.close()
    pool.close()
  })
})
