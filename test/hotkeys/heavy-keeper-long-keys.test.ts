// Keys come from requests: HeavyKeeper keeps each at a bounded size (docs/rules/heavykeeper.md, "Long keys").
import { describe, expect, it } from 'vitest'

import { HeavyKeeper, type TopKItem } from '../../lib/components/hotkeys/heavy-keeper'

const PREFIX = 96 // bytes of a long key that list() and onExpelled show

describe('HeavyKeeper: long keys are kept as a bounded prefix plus a hash', () => {
  it('k keys of 1 MiB each grow memory by far less than they weigh', () => {
    const k = 64
    const hk = new HeavyKeeper<Uint8Array>({ k, width: 4096, seed: 1 })
    // One buffer, a different tail per key: only what HeavyKeeper keeps can add to the resident set.
    const key = new Uint8Array(1 << 20).fill(7)
    hk.add(key)
    const before = process.memoryUsage().rss
    for (let i = 0; i < k; i++) {
      new DataView(key.buffer).setUint32(key.length - 4, i)
      hk.add(key, 2)
    }
    const grown = process.memoryUsage().rss - before
    expect(hk.list()).toHaveLength(k)
    expect(grown).toBeLessThan(16 << 20) // whole keys took k MiB (64 MiB) here
    hk.close()
  })

  it('lists a long key as its first bytes, marked truncated, and tells long keys with one prefix apart', () => {
    const hk = new HeavyKeeper({ k: 10, width: 4096, seed: 2 })
    const a = 'p'.repeat(300) + 'a'
    const b = 'p'.repeat(300) + 'b'
    hk.add(a, 3)
    hk.add(b, 2)
    hk.add(a)
    hk.add('short', 1)
    expect(hk.list()).toEqual([
      { key: 'p'.repeat(PREFIX), count: 4, truncated: true },
      { key: 'p'.repeat(PREFIX), count: 2, truncated: true },
      { key: 'short', count: 1 },
    ])
    expect(hk.count(a)).toBe(4)
    expect(hk.count(b)).toBe(2)
    // 104 bytes is still kept whole; one more byte is not.
    hk.add('q'.repeat(104), 9)
    hk.add('r'.repeat(105), 8)
    expect(hk.list().slice(0, 2)).toEqual([
      { key: 'q'.repeat(104), count: 9 },
      { key: 'r'.repeat(PREFIX), count: 8, truncated: true },
    ])
    hk.close()
  })

  it('cuts a string key at a whole character', () => {
    const hk = new HeavyKeeper({ k: 2, width: 1024, seed: 3 })
    hk.add('a' + 'é'.repeat(100)) // 'é' is 2 bytes: byte 96 splits the 48th
    expect(hk.list()).toEqual([{ key: 'a' + 'é'.repeat(47), count: 1, truncated: true }])
    hk.close()
  })

  it('keeps byte keys as their first bytes too', () => {
    const hk = new HeavyKeeper<Uint8Array>({ k: 2, width: 1024, seed: 4 })
    const key = new Uint8Array(500).map((_, i) => i & 0xff)
    hk.add(key, 5)
    const [item] = hk.list()
    expect(item.truncated).toBe(true)
    expect(item.count).toBe(5)
    expect(Array.from(item.key)).toEqual(Array.from(key.subarray(0, PREFIX)))
    hk.close()
  })

  it('expelled events say when a key was truncated', () => {
    const hk = new HeavyKeeper({ k: 1, width: 1024, seed: 5 })
    const expelled: TopKItem<string>[] = []
    hk.onExpelled((item) => expelled.push(item))
    hk.add('z'.repeat(1000))
    hk.add('short', 2)
    hk.fading() // 'short' halves to 1
    hk.fading() // and leaves
    expect(expelled).toEqual([
      { key: 'z'.repeat(PREFIX), count: 1, truncated: true },
      { key: 'short', count: 1 },
    ])
    hk.close()
  })
})
