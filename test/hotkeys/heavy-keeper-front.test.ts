// The JavaScript front of a local HeavyKeeper must change nothing but the cost: the same adds give the same
// answers, list, counts, total and expelled keys as adds that all go through native code (addMany does).
import { describe, expect, it } from 'vitest'

import { HeavyKeeper, type TopKItem } from '../../lib/hotkeys/heavy-keeper'
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
