import { spawnSync } from 'child_process'
import * as path from 'path'
import { afterEach, describe, expect, it, vi } from 'vitest'

import { HotKeyCache } from '../../lib/components/hotkeys/hot-key-cache'
import { fieldOf } from '../helpers/typed-errors'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'
import { zipfSampler } from './zipf-stream.mjs'

afterEach(() => {
  vi.useRealTimers()
})

function cache(options: ConstructorParameters<typeof HotKeyCache>[0] = {}) {
  const clock = new ManualClock(1000)
  return { clock, hot: new HotKeyCache<string>({ seed: 1, now: clock.now, ...options }) }
}

describe('HotKeyCache: reference behaviour', () => {
  it('auto-caches the value of a hot key and not of a cold one', () => {
    const { hot } = cache({ k: 2, capacity: 10, ttl: 1000 })
    hot.add('a', 10)
    hot.add('b', 8)
    expect(hot.addWithValue('a', 'value of a')).toBe(true)
    expect(hot.addWithValue('c', 'value of c')).toBe(false) // count 1, below the top-2
    expect(hot.get('a')).toBe('value of a')
    expect(hot.get('c')).toBeUndefined()
    expect(hot.list().map((i) => i.key)).toEqual(['a', 'b'])
  })

  it('expires values after the ttl, and allow rules use their own ttl', () => {
    const { hot, clock } = cache({ ttl: 100, allow: [{ pattern: /^long-/, ttl: 500 }], autoCache: true })
    hot.addWithValue('short', 's')
    hot.addWithValue('long-1', 'l') // hot (the top-k is not full), so auto-cached with the default ttl
    const { hot: allowOnly, clock: allowClock } = cache({
      ttl: 100,
      allow: [{ pattern: /^long-/, ttl: 500 }],
      autoCache: false,
    })
    allowOnly.addWithValue('long-1', 'l')
    clock.advance(99)
    allowClock.advance(99)
    expect(hot.get('short')).toBe('s')
    clock.advance(1)
    allowClock.advance(401)
    expect(hot.get('short')).toBeUndefined()
    expect(allowOnly.get('long-1')).toBeUndefined()
    expect(hot.size).toBe(1) // the expired entry read was removed
  })

  it('keeps TTLs right past 2^32 ms of uptime (the reference wraps after 49.7 days)', () => {
    const { hot, clock } = cache({ ttl: 100 })
    clock.time = 2 ** 32 - 30
    hot.addWithValue('a', 'v')
    clock.advance(60) // now past 2^32: 32-bit arithmetic would see an expiry far in the past
    expect(hot.get('a')).toBe('v')
    clock.advance(40)
    expect(hot.get('a')).toBeUndefined()
  })

  it('is bounded by capacity, least recently used first out', () => {
    const { hot } = cache({ k: 10, capacity: 3, ttl: 1000 })
    for (const key of ['a', 'b', 'c']) hot.addWithValue(key, key)
    expect(hot.get('a')).toBe('a') // a is now the most recently used
    hot.addWithValue('d', 'd')
    expect(hot.size).toBe(3)
    expect(hot.get('b')).toBeUndefined()
    expect(['a', 'c', 'd'].map((k) => hot.get(k))).toEqual(['a', 'c', 'd'])
  })

  it('removes a key from the cache when it is expelled from the top-k', () => {
    const { hot } = cache({ k: 1, ttl: 1000 })
    hot.addWithValue('a', 'A', 5)
    expect(hot.get('a')).toBe('A')
    expect(hot.addWithValue('b', 'B', 6)).toBe(true)
    expect(hot.get('a')).toBeUndefined()
    expect(hot.get('b')).toBe('B')
    hot.add('c', 7) // a plain add that expels also empties the cache (the reference ignores it)
    expect(hot.get('b')).toBeUndefined()
  })

  it('allow rules by key and by pattern cache keys that are not hot (reference TestOnlyWhileList)', () => {
    const { hot } = cache({
      k: 100,
      capacity: 100,
      autoCache: false,
      allow: [{ pattern: '^1[0-9]{2}' }, { key: 'exact' }],
    })
    for (let i = 0; i < 100; i++) {
      hot.addWithValue(String(i), String(i))
      expect(hot.get(String(i))).toBeUndefined()
    }
    for (let i = 100; i < 200; i++) {
      hot.addWithValue(String(i), String(i))
      expect(hot.get(String(i))).toBe(String(i))
    }
    hot.addWithValue('exact', 'yes')
    hot.addWithValue('exactly', 'no')
    expect(hot.get('exact')).toBe('yes')
    expect(hot.get('exactly')).toBeUndefined()
  })

  it('deny rules by pattern and by key keep hot keys out (reference TestHotkeyBlacklist)', () => {
    const { hot } = cache({ k: 100, capacity: 100, deny: [{ pattern: '^2$' }, { pattern: /^3$/g }, { key: '5' }] })
    const next = zipfSampler({ s: 2, v: 2, n: 1001, seed: 11 })
    for (let i = 0; i < 100_000; i++) {
      const key = String(next())
      hot.addWithValue(key, key)
    }
    for (let i = 0; i < 10; i++) {
      expect(hot.get(String(i))).toBe([2, 3, 5].includes(i) ? undefined : String(i))
    }
  })

  it("the empty key does not match every pattern rule (the reference compares it with the rules' empty key field)", () => {
    const { hot: denying } = cache({ deny: [{ pattern: '^2$' }] })
    denying.addWithValue('', 'empty')
    expect(denying.get('')).toBe('empty')
    const { hot: allowing } = cache({ autoCache: false, allow: [{ pattern: '^1' }] })
    allowing.addWithValue('', 'empty')
    expect(allowing.get('')).toBeUndefined()
  })

  it('delete() drops a value; the key keeps its count', () => {
    const { hot } = cache()
    hot.addWithValue('a', 'A', 3)
    expect(hot.delete('a')).toBe(true)
    expect(hot.get('a')).toBeUndefined()
    expect(hot.list()).toEqual([{ key: 'a', count: 3 }])
  })
})

describe('HotKeyCache: shared', () => {
  it('a key made hot by another member is cached here on its first add (values stay per member)', () => {
    const shared = uniqueName('hot-shared')
    const { hot: a } = cache({ k: 2, shared })
    const { hot: b } = cache({ k: 2, shared })
    a.add('cold-1', 3)
    a.add('cold-2', 3)
    a.addWithValue('x', 'from a', 50)
    b.add('y', 4)
    b.add('z', 4) // b's own top-2 is full at count 4
    expect(b.addWithValue('x', 'from b')).toBe(true) // host-wide count 51
    expect(b.get('x')).toBe('from b')
    expect(a.get('x')).toBe('from a')
    expect(b.list().map((i) => i.key)).toEqual(['x', 'y'])
    a.close()
    b.close()
  })

  it('members with fadeEvery timers fade the host once per period, not once per member', () => {
    vi.useFakeTimers({ now: 0 })
    const shared = uniqueName('hot-fade')
    const options = { shared, fadeEvery: 1000, now: () => Date.now() }
    const { hot: a } = cache(options)
    const { hot: b } = cache(options)
    a.add('key', 64)
    vi.advanceTimersByTime(1000) // both timers fire: one fading
    expect(a.list()).toEqual([{ key: 'key', count: 32 }])
    vi.advanceTimersByTime(2000)
    expect(b.topk.count('key')).toBe(8)
    a.close()
    b.close()
  })
})

describe('HotKeyCache: fading', () => {
  it('fades every fadeEvery ms, and close() stops the timer', () => {
    vi.useFakeTimers()
    const { hot } = cache({ fadeEvery: 1000 })
    hot.add('a', 64)
    vi.advanceTimersByTime(2000)
    expect(hot.list()).toEqual([{ key: 'a', count: 16 }])
    hot.close()
    vi.advanceTimersByTime(5000)
    expect(hot.list()).toEqual([{ key: 'a', count: 16 }])
  })

  it('a key faded to 0 leaves the top-k and the cache', () => {
    const { hot } = cache({ ttl: 1000 })
    hot.addWithValue('a', 'A')
    hot.fading()
    expect(hot.list()).toEqual([])
    expect(hot.get('a')).toBeUndefined()
  })

  it('never keeps the process alive: a process that forgets close() exits', () => {
    const dist = path.join(__dirname, '..', '..', 'dist', 'cjs')
    const script = `const { HotKeyCache } = require(${JSON.stringify(dist)}); new HotKeyCache({ fadeEvery: 50 }).add('a')`
    const start = Date.now()
    const result = spawnSync(process.execPath, ['-e', script], { timeout: 10_000 })
    expect(result.status).toBe(0)
    expect(Date.now() - start).toBeLessThan(5000)
  })
})

describe('HotKeyCache: bad input', () => {
  it.each([
    [{ k: 0 }, 'k'],
    [{ capacity: 0 }, 'capacity'],
    [{ ttl: 0 }, 'ttl'],
    [{ autoCache: 'yes' }, 'autoCache'],
    [{ fadeEvery: 0 }, 'fadeEvery'],
    [{ now: 5 }, 'now'],
    [{ allow: {} }, 'allow'],
    [{ allow: [{}] }, 'allow[0]'],
    [{ allow: [{ key: 'a', pattern: 'b' }] }, 'allow[0]'],
    [{ allow: [{ pattern: '(' }] }, 'allow[0].pattern'],
    [{ allow: [{ key: 'a', ttl: -1 }] }, 'allow[0].ttl'],
    [{ deny: [{ key: 5 }] }, 'deny[0].key'],
    [{ minCount: -1 }, 'minCount'],
  ])('%j is an InvalidOptionError on `%s`', (options, field) => {
    expect(fieldOf(() => new HotKeyCache(options as never))).toBe(field)
  })

  it('a non-string key is ignored and counted, never thrown (add is a hot path)', () => {
    const { hot } = cache()
    expect(hot.add(5 as never)).toBe(false)
    expect(hot.addWithValue(new Uint8Array(2) as never, 'v')).toBe(false)
    expect(hot.stats()).toMatchObject({ values: 0, invalidArguments: 1, topk: { invalidArguments: 1, total: 0 } })
  })
})
