import { describe, expect, it } from 'vitest'

import { HeavyKeeper, type TopKItem } from '../../lib/components/hotkeys/heavy-keeper'
import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'
import { exactCounts, exactTop, zipfSampler } from './zipf-stream.mjs'

const entries = (items: TopKItem<string | Uint8Array>[]) => items.map((i) => [String(i.key), i.count])

function collectExpelled<K extends string | Uint8Array>(hk: HeavyKeeper<K>): TopKItem<K>[] {
  const out: TopKItem<K>[] = []
  hk.onExpelled((item) => out.push(item))
  return out
}

describe('HeavyKeeper: reference behaviour (docs/rules/heavykeeper.md)', () => {
  it('lists the top 10 of a Zipf(3) stream in order, with their exact counts', () => {
    // The reference test: rand.NewZipf(s = 3, v = 2, imax = 1000), 10 000 adds, k 10, width 10 000, depth 5.
    const next = zipfSampler({ s: 3, v: 2, n: 1001, seed: 7 })
    const keys = Array.from({ length: 10_000 }, () => String(next()))
    const hk = new HeavyKeeper({ k: 10, width: 10_000, depth: 5, decay: 0.925, seed: 1 })
    for (const key of keys) hk.add(key)
    const exact = exactTop(exactCounts(keys), 10)
    expect(exact.map(([key]) => key)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
    expect(entries(hk.list())).toEqual(exact)
    expect(hk.total).toBe(10_000)
  })

  it('gates on minCount: a key is not hot before its count reaches it', () => {
    const hk = new HeavyKeeper({ k: 10_000, minCount: 10, seed: 1 })
    for (let i = 0; i < 9; i++) expect(hk.add('1')).toBe(false)
    expect(hk.add('1')).toBe(true)
    expect(hk.list()).toEqual([{ key: '1', count: 10 }])
  })

  it('fading() halves every count, the top-k counts and the total', () => {
    const hk = new HeavyKeeper({ k: 5, width: 1024, seed: 1 })
    hk.add('a', 100)
    hk.add('b', 41)
    hk.add('c', 7)
    expect(hk.total).toBe(148)
    hk.fading()
    expect(hk.list()).toEqual([
      { key: 'a', count: 50 },
      { key: 'b', count: 20 },
      { key: 'c', count: 3 },
    ])
    expect(hk.count('b')).toBe(20)
    expect(hk.total).toBe(74)
  })

  it('lists count descending, ties by key ascending (byte order)', () => {
    const hk = new HeavyKeeper({ k: 5, width: 1024, seed: 1 })
    for (const key of ['b', 'c', 'a', 'é', 'z']) hk.add(key, key === 'z' ? 9 : 4)
    expect(entries(hk.list())).toEqual([
      ['z', 9],
      ['a', 4],
      ['b', 4],
      ['c', 4],
      ['é', 4],
    ])
  })

  it('delivers every expelled key to the listener, however many one call expels', () => {
    const hk = new HeavyKeeper({ k: 1, width: 4096, seed: 1 })
    const expelled = collectExpelled(hk)
    // Each key outweighs the one before it: 99 expulsions from one batch (the reference's channel holds 32).
    const keys = Array.from({ length: 100 }, (_, i) => `key-${i}`)
    for (let i = 0; i < keys.length; i++) hk.add(keys[i], i + 1)
    expect(expelled.map((e) => e.key)).toEqual(keys.slice(0, 99))
    expect(expelled.map((e) => e.count)).toEqual(keys.slice(0, 99).map((_, i) => i + 1))

    // The same 99 expulsions from one addMany call: key-i appears i + 1 times in a row.
    const batch = new HeavyKeeper({ k: 1, width: 4096, seed: 1 })
    const fromBatch = collectExpelled(batch)
    batch.addMany(keys.flatMap((key, i) => Array<string>(i + 1).fill(key)))
    expect(fromBatch.map((e) => e.key)).toEqual(keys.slice(0, 99))
  })

  it('stops collecting when the last listener is disposed', () => {
    const hk = new HeavyKeeper({ k: 1, width: 1024, seed: 1 })
    const seen: string[] = []
    const subscription = hk.onExpelled((item) => seen.push(item.key))
    hk.add('a', 1)
    hk.add('b', 2)
    subscription.dispose()
    hk.add('c', 3)
    expect(seen).toEqual(['a'])
  })

  it('is deterministic with a seed', () => {
    const run = (seed: number) => {
      const next = zipfSampler({ s: 1, n: 5000, seed: 3 })
      const hk = new HeavyKeeper({ k: 20, width: 64, depth: 2, seed })
      for (let i = 0; i < 50_000; i++) hk.add(`k${next()}`)
      return hk.list()
    }
    expect(run(42)).toEqual(run(42))
    expect(run(42)).not.toEqual(run(43))
  })

  it('hashes Uint8Array keys in place, as the same key as the string of those bytes', () => {
    const hk = new HeavyKeeper<string | Uint8Array>({ k: 5, width: 1024, seed: 1 })
    hk.add(new TextEncoder().encode('naïve'), 3)
    hk.add('naïve', 2)
    const listed = hk.list()
    expect(listed).toHaveLength(1)
    expect(listed[0].key).toBeInstanceOf(Uint8Array) // listed in the form it was first added in
    expect(Buffer.from(listed[0].key as Uint8Array).toString()).toBe('naïve')
    expect(listed[0].count).toBe(5)
    expect(hk.count('naïve')).toBe(5)
    // A view into a larger buffer hashes only its own bytes.
    const big = Buffer.from('xxnaïvexx')
    expect(hk.count(big.subarray(2, 2 + Buffer.byteLength('naïve')))).toBe(5)
  })

  it('counts keys of any length by their whole bytes (longer than the stack buffer the binding reads into)', () => {
    const hk = new HeavyKeeper({ k: 3, width: 1024, seed: 1 })
    const long = 'ü'.repeat(1000) + 'end'
    hk.add(long, 4)
    hk.add(long.slice(0, -1), 2)
    expect(hk.count(long)).toBe(4)
    expect(hk.count(long.slice(0, -1))).toBe(2)
    // Listed as their first 96 bytes (docs/rules/heavykeeper.md, "Long keys").
    expect(hk.list()).toEqual([
      { key: 'ü'.repeat(48), count: 4, truncated: true },
      { key: 'ü'.repeat(48), count: 2, truncated: true },
    ])
  })

  it('stops counting after close()', () => {
    const hk = new HeavyKeeper({ k: 3, seed: 1 })
    hk.add('a')
    hk.close()
    expect(hk.add('a')).toBe(false)
    expect(hk.addMany(['a', 'a'])).toBe(0)
    expect(hk.list()).toEqual([{ key: 'a', count: 1 }])
  })
})

describe('HeavyKeeper: bad input gets typed errors, never a native crash', () => {
  it.each([
    [{ k: 0 }, 'k'],
    [{ k: 1.5 }, 'k'],
    [{ width: 0 }, 'width'],
    [{ depth: 0 }, 'depth'],
    [{ depth: 65 }, 'depth'],
    [{ decay: 0 }, 'decay'],
    [{ decay: 1 }, 'decay'],
    [{ decay: 1.5 }, 'decay'],
    [{ decay: Number.NaN }, 'decay'],
    [{ minCount: -1 }, 'minCount'],
    [{ seed: -1 }, 'seed'],
    [{ shared: 'no/slash' }, 'shared'],
    [{ width: 2 ** 28, depth: 64 }, 'width'],
  ])('%j is an InvalidOptionError on `%s`', (options, field) => {
    const error = (() => {
      try {
        new HeavyKeeper(options)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect((error as InvalidOptionError).field).toBe(field)
  })

  it.each([[5], [null], [undefined], [{}], [['a']], [new Int16Array(2)], [Symbol('k')]])(
    'key %s: add ignores and counts it (the hot path never throws), the other methods throw InvalidArgumentError',
    (key) => {
      const hk = new HeavyKeeper({ k: 3 })
      expect(hk.add(key as never)).toBe(false)
      expect(hk.stats()).toMatchObject({ invalidArguments: 1, total: 0 })
      expect(() => hk.count(key as never)).toThrow(InvalidArgumentError)
      expect(() => hk.addMany(['ok', key] as never)).toThrow(/keys\[1\]/)
      expect(hk.count('ok')).toBe(1) // the keys before the bad one were added
    },
  )

  it.each([[-1], [1.5], [2 ** 32], [Number.NaN], ['1']])(
    'incr %s: add ignores and counts it, addMany throws InvalidArgumentError',
    (incr) => {
      const hk = new HeavyKeeper({ k: 3 })
      expect(hk.add('a', incr as never)).toBe(false)
      expect(hk.stats().invalidArguments).toBe(1)
      expect(() => hk.addMany(['a'], incr as never)).toThrow(InvalidArgumentError)
      expect(hk.total).toBe(0)
    },
  )
})
