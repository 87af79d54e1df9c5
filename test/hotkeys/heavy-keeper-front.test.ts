// The JavaScript front of a local HeavyKeeper must change nothing but the cost: the same adds give the same
// answers, list, counts, total and expelled keys as adds that all go through native code (addMany does).
import { describe, expect, it } from 'vitest'

import { HeavyKeeper, type TopKItem } from '../../lib/components/hotkeys/heavy-keeper'
import { murmur3 } from '../../lib/components/hotkeys/murmur3'
import { zipfSampler } from './zipf-stream.mjs'

interface Op {
  key: string
  incr: number
}

function stream(n: number, seed: number, s: number, distinct: number): Op[] {
  const next = zipfSampler({ s, v: 1, n: distinct, seed })
  const ops: Op[] = []
  for (let i = 0; i < n; i++) ops.push({ key: `key:${next()}`, incr: i % 97 === 0 ? 1 + (i % 5) : 1 })
  return ops
}

function run(ops: Op[], via: 'add' | 'addMany', fadeEvery: number) {
  const hk = new HeavyKeeper({ k: 50, width: 512, depth: 4, seed: 11 })
  const expelled: TopKItem<string>[] = []
  hk.onExpelled((item) => expelled.push(item))
  const answers: boolean[] = []
  ops.forEach((op, i) => {
    answers.push(via === 'add' ? hk.add(op.key, op.incr) : hk.addMany([op.key], op.incr) === 1)
    if ((i + 1) % fadeEvery === 0) hk.fading()
  })
  const result = {
    answers,
    list: hk.list(),
    total: hk.total,
    counts: [0, 1, 2, 3, 500].map((r) => hk.count(`key:${r}`)),
  }
  hk.close()
  return { ...result, expelled }
}

describe('HeavyKeeper: the JavaScript front (docs/rules/heavykeeper.md)', () => {
  it.each([
    [1.0, 5000],
    [1.2, 5000],
    [0.8, 20000],
  ])('gives exactly what native code alone gives on a Zipf(%s) stream over %s keys', (s, distinct) => {
    const ops = stream(60_000, 5, s, distinct)
    const front = run(ops, 'add', 25_000)
    const native = run(ops, 'addMany', 25_000)
    expect(front.answers).toEqual(native.answers)
    expect(front.list).toEqual(native.list)
    expect(front.total).toBe(native.total)
    expect(front.counts).toEqual(native.counts)
    expect(front.expelled).toEqual(native.expelled)
    expect(front.list.length).toBe(50)
  })

  // Warm: 200 keys in a sketch of 256 buckets a row (some keys lose a row to another: coin flips), so that most adds
  // are served and keys of the top-k and outside it defer adding to their buckets. Increments of 1 to 5, and now
  // and then one above 16 or one of 2^29 (native code's, and past what a key may defer). A decay of 0.999 makes
  // coin flips take units off counts of 255 and more (a flip's probability stops falling there), from keys that
  // defer: with one row, the unit comes off the key's largest count, which its heap count must then not outgrow.
  it.each([
    [1.0, undefined, 4],
    [1.2, undefined, 4],
    [1.0, 0.999, 4],
    [1.0, 0.999, 1],
  ])(
    'gives exactly what native code alone gives while keys defer (Zipf %s over 200 keys, decay %s, depth %s)',
    (s, decay, depth) => {
      const ops = stream(80_000, 17, s, 200).map((op, i) => ({
        key: op.key,
        incr: i % 5_003 === 0 ? 2 ** 29 : i % 1_009 === 0 ? 40 : op.incr,
      }))
      const runVia = (via: 'add' | 'addMany') => {
        const hk = new HeavyKeeper({ k: 20, width: 256, depth, decay, seed: 7 })
        const expelled: TopKItem<string>[] = []
        hk.onExpelled((item) => expelled.push(item))
        const answers: boolean[] = []
        const reads: number[] = []
        ops.forEach((op, i) => {
          answers.push(via === 'add' ? hk.add(op.key, op.incr) : hk.addMany([op.key], op.incr) === 1)
          if ((i + 1) % 30_000 === 0) hk.fading()
          if ((i + 1) % 7_000 === 0) reads.push(hk.count('key:0')) // a read between deferrals
        })
        const counts = [0, 1, 50, 199].map((r) => hk.count(`key:${r}`))
        const result = { answers, reads, list: hk.list(), total: hk.total, expelled, counts }
        hk.close()
        return result
      }
      expect(runVia('add')).toEqual(runVia('addMany'))
    },
  )

  it('leaves increments it cannot take to native code: saturation and bad values', () => {
    const hk = new HeavyKeeper({ k: 2, width: 64, seed: 1 })
    expect(hk.add('a')).toBe(true) // native code puts 'a' in the top-k; the front learns where
    expect(hk.add('a')).toBe(true)
    expect(hk.add('a', 0)).toBe(true)
    expect(hk.add('a', 0xfffffff0)).toBe(true)
    expect(hk.add('a', 100)).toBe(true) // over 2^32 - 1: native code saturates
    expect(hk.count('a')).toBe(0xffffffff)
    expect(hk.add('a', 1.5)).toBe(false)
    expect(hk.add('a', -1)).toBe(false)
    expect(hk.stats().invalidArguments).toBe(2)
    expect(hk.total).toBe(2 + 0xfffffff0 + 100)
    expect(hk.list()).toEqual([{ key: 'a', count: 0xffffffff }])
    hk.close()
  })

  it('counts nothing after close()', () => {
    const hk = new HeavyKeeper({ k: 2, width: 64, seed: 1 })
    hk.add('a')
    hk.add('a')
    hk.close()
    expect(hk.add('a')).toBe(false)
    expect(hk.list()).toEqual([{ key: 'a', count: 2 }])
  })
})

describe('HeavyKeeper: what the JavaScript front holds (docs/rules/heavykeeper.md)', () => {
  // Adds that cross into native code, counted through the keeper's bound native add.
  function countCrossings(hk: HeavyKeeper<string | Uint8Array> | HeavyKeeper): { crossings: number } {
    const counter = { crossings: 0 }
    const inner = hk as unknown as { nativeAdd: (key: unknown, incr: unknown) => number }
    const nativeAdd = inner.nativeAdd
    inner.nativeAdd = (key, incr) => {
      counter.crossings++
      return nativeAdd(key, incr)
    }
    return counter
  }

  it('serves most adds of a warm Zipf stream without crossing into native code, in and outside the top-k', () => {
    const hk = new HeavyKeeper({ k: 20, width: 1024, seed: 3 })
    const ops = stream(40_000, 9, 1.0, 200)
    for (const op of ops.slice(0, 20_000)) hk.add(op.key)
    const counter = countCrossings(hk)
    const top = new Set(hk.list().map((item) => item.key))
    let outside = 0
    for (const op of ops.slice(20_000)) {
      if (!top.has(op.key)) outside++
      hk.add(op.key)
    }
    // A third of these adds are of keys outside the top 20; most of those are served too.
    expect(outside).toBeGreaterThan(6_000)
    expect(counter.crossings).toBeLessThan(outside / 2)
    hk.close()
  })

  it.each([4, 3, 2, 1])(
    'decays the buckets of other keys itself, with the coin flips native code would draw, and gives what it gives (depth %s)',
    (depth) => {
      // 64 buckets a row for 300 keys: most adds meet another key's bucket in some row (a coin flip each). Below depth
      // 4 the front's entry repeats the last row's bucket, which must be updated once.
      const ops = stream(30_000, 13, 1.0, 300).map((op) => ({ key: op.key, incr: 1 }))
      const runVia = (via: 'add' | 'addMany') => {
        const hk = new HeavyKeeper({ k: 10, width: 64, depth, seed: 21 })
        for (const op of ops.slice(0, 10_000)) hk.add(op.key)
        const counter = countCrossings(hk)
        const answers = ops.slice(10_000).map((op) => (via === 'add' ? hk.add(op.key) : hk.addMany([op.key]) === 1))
        const result = {
          answers,
          list: hk.list(),
          total: hk.total,
          counts: ops.slice(0, 50).map((op) => hk.count(op.key)),
        }
        hk.close()
        return { result, crossings: counter.crossings }
      }
      const front = runVia('add')
      expect(front.result).toEqual(runVia('addMany').result)
      expect(front.crossings).toBeLessThan(20_000 / 4) // most adds stayed in JavaScript, coin flips included
    },
  )

  it('counts a warm key without writing its buckets until native code runs', () => {
    const hk = new HeavyKeeper({ k: 4, width: 1024, seed: 3 })
    for (let i = 0; i < 64; i++) hk.add(`key:${i % 4}`) // the front holds the four; past DEFER_AFTER slow adds
    const sketch = (hk as unknown as { front: { sketch: Uint32Array } }).front.sketch
    const before = sketch.slice()
    for (let i = 0; i < 1_000; i++) expect(hk.add('key:0')).toBe(true)
    expect(sketch).toEqual(before) // deferred: the front's own memory moved, not the sketch's
    expect(hk.count('key:0')).toBe(16 + 1_000)
    expect(sketch).not.toEqual(before)
    hk.close()
  })

  it('stops counting a key through the front once it leaves the top-k', () => {
    const hk = new HeavyKeeper({ k: 1, width: 4096, seed: 1 })
    for (let i = 0; i < 3; i++) expect(hk.add('a')).toBe(true) // the front now holds 'a' at heap slot 0
    for (let i = 0; i < 4; i++) hk.add('b')
    expect(hk.add('b')).toBe(true) // 'b' (5) takes slot 0 from 'a' (3)
    const counter = countCrossings(hk)
    expect(hk.add('a')).toBe(false) // the front's 'a' is stale: native code answers, and 'b' is not counted
    expect(counter.crossings).toBe(1)
    expect(hk.list()).toEqual([{ key: 'b', count: 5 }])
    expect(hk.count('a')).toBe(4)
    expect(hk.total).toBe(9)
    hk.close()
  })

  // One row, and a decay that lets another key wear a bucket down quickly: a key held outside the top-k that has
  // since entered it (without the front seeing it) can then have an estimate below the heap's minimum, which the
  // front alone would take for "outside".
  function wornDown(): HeavyKeeper<string | Uint8Array> {
    const hk = new HeavyKeeper<string | Uint8Array>({ k: 1, width: 4096, depth: 1, decay: 0.999, seed: 1 })
    for (let i = 0; i < 40; i++) hk.add('hot')
    return hk
  }
  const bucketOf = (key: string) => murmur3(key, 0) % 4096
  function wearDown(hk: HeavyKeeper<string | Uint8Array>, key: string): void {
    let other = 0
    while (bucketOf(`other-${other}`) !== bucketOf(key)) other++
    hk.add(`other-${other}`, 50) // about 47 decrements of the key's count, which keeps its bucket
  }

  it.each(['bytes', 'addMany'] as const)(
    'asks native code again about the keys it holds outside the top-k once %s may have put one in',
    (via) => {
      const hk = wornDown()
      for (let i = 0; i < 5; i++) expect(hk.add('warm')).toBe(false) // held outside the top-k (5 >= 40 / 16)
      const counter = countCrossings(hk)
      expect(hk.add('warm')).toBe(false)
      expect(counter.crossings).toBe(0) // served by the front
      // 60 more of 'warm' as bytes, or in a batch: the same key for native code, which puts it above 'hot'.
      if (via === 'bytes') for (let i = 0; i < 60; i++) hk.add(new TextEncoder().encode('warm'))
      else hk.addMany(Array.from({ length: 60 }, () => 'warm'))
      wearDown(hk, 'warm') // its estimate is now below its count in the heap (66), yet it is the top-k
      expect(hk.add('warm')).toBe(true)
      hk.close()
    },
  )

  it('holds one of two keys with one fingerprint, and leaves the other to native code', () => {
    // The two share their row-0 bucket, and either could count into the other's: a deferring key's buckets must be
    // no other held key's.
    const [a, b] = ['tenant-9822', 'tenant-97022']
    expect(murmur3(a, 0)).toBe(murmur3(b, 0))
    const ops = stream(40_000, 23, 1.0, 40).map((op) => ({
      key: op.key === 'key:0' ? a : op.key === 'key:1' ? b : op.key,
      incr: op.incr,
    }))
    const runVia = (via: 'add' | 'addMany') => {
      const hk = new HeavyKeeper({ k: 8, width: 64, depth: 4, decay: 0.999, seed: 5 })
      for (const op of ops.slice(0, 20_000)) hk.addMany([op.key], op.incr)
      const counter = countCrossings(hk)
      const crossed = new Map<string, number>([
        [a, 0],
        [b, 0],
      ])
      const answers = ops.slice(20_000).map((op) => {
        const before = counter.crossings
        const answer = via === 'add' ? hk.add(op.key, op.incr) : hk.addMany([op.key], op.incr) === 1
        if (counter.crossings > before && crossed.has(op.key)) crossed.set(op.key, crossed.get(op.key)! + 1)
        return answer
      })
      const result = { answers, list: hk.list(), counts: [a, b].map((key) => hk.count(key)) }
      hk.close()
      return { result, crossed }
    }
    const front = runVia('add')
    expect(front.result).toEqual(runVia('addMany').result)
    expect(front.result.list.map((item) => item.key)).toEqual(expect.arrayContaining([a, b]))
    // The first add of each crosses (addMany put them in); then one of them is served and the other never is.
    const adds = (key: string) => ops.slice(20_000).filter((op) => op.key === key).length
    const crossings = [a, b].map((key) => front.crossed.get(key)! / adds(key)).sort()
    expect(crossings[0]).toBeLessThan(0.05)
    expect(crossings[1]).toBe(1)
  })

  it('holds no key with lone surrogates: two such strings can be one key in UTF-8', () => {
    const hk = wornDown()
    for (let i = 0; i < 5; i++) hk.add('\ud800') // held outside the top-k
    for (let i = 0; i < 60; i++) hk.add('\udbff') // both are U+FFFD in UTF-8: one key, now the top-k
    expect(hk.list()).toEqual([{ key: '\ufffd', count: 65 }])
    wearDown(hk, '\ufffd')
    expect(hk.add('\ud800')).toBe(true)
    hk.close()
  })
})
