import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { murmur3 } from '../../lib/components/hotkeys/murmur3'
import { HeavyKeeper } from '../../lib/components/hotkeys/heavy-keeper'

describe('murmur3 (x86_32, the hash HeavyKeeper and the Go reference use)', () => {
  it.each([
    ['', 0, 0],
    ['a', 0, 1009084850],
    ['a', 1, 1485495528],
    ['a', 4, 2383563902],
    ['hello', 0, 613153351],
    ['hello', 1, 3142237357],
    ['hello', 4, 1221526385],
  ])('murmur3(%j, %i) = %i (docs/rules/heavykeeper.md golden)', (key, seed, hash) => {
    expect(murmur3(key, seed)).toBe(hash)
    expect(murmur3(Buffer.from(key), seed)).toBe(hash)
  })

  it('hashes a string as its UTF-8 bytes', () => {
    const key = 'ключ-🔑'
    expect(murmur3(key, 3)).toBe(murmur3(new TextEncoder().encode(key), 3))
  })

  it('puts keys in the buckets murmur3(key, row) % width, as the reference does', () => {
    // Two keys that share row 0's bucket of a one-row sketch collide: the heavier keeps it.
    const width = 16
    const bucket = (key: string) => murmur3(key, 0) % width
    const keys = Array.from({ length: 200 }, (_, i) => `k${i}`)
    const a = keys[0]
    const b = keys.find((k) => k !== a && bucket(k) === bucket(a)) as string
    const c = keys.find((k) => bucket(k) !== bucket(a)) as string
    const hk = new HeavyKeeper({ k: 3, width, depth: 1, decay: 0.5, seed: 1 })
    hk.add(a, 1000)
    hk.add(c, 1)
    hk.add(b, 1) // same bucket as a: decays a's 1000 with probability 0.5^255, so it almost surely loses
    expect(hk.count(a)).toBe(1000)
    expect(hk.count(b)).toBe(0)
    expect(hk.count(c)).toBe(1)
  })

  it('refuses bad arguments with typed errors', () => {
    expect(() => murmur3(5 as never)).toThrow(InvalidArgumentError)
    expect(() => murmur3('a', -1)).toThrow(InvalidArgumentError)
    expect(() => murmur3('a', 2 ** 32)).toThrow(InvalidArgumentError)
  })
})
