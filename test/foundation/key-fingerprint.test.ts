import { describe, expect, it } from 'vitest'

import { fingerprintKey } from '../../lib/foundation/keyed-table/key-fingerprint'
import { native } from '../../lib/foundation/native/load-native'
import { seededRandom } from '../helpers/seeded-random.mjs'

const { keyedFingerprint } = native as unknown as {
  keyedFingerprint: (key: string, k0: number, k1: number) => [number, number]
}

describe('key fingerprint (docs/rules/keyed-table.md, "Fingerprints")', () => {
  it('is the one C++ computes, for any string: every length, lone surrogates, non-Latin text', () => {
    const random = seededRandom(31)
    const out = new Int32Array(2)
    const samples = ['', 'a', '203.0.113.7', '2001:db8:1:2::/64', 'ключ-клиента', '\ud800', 'x\udfff\ud800y', '🙂🙃']
    for (let n = 0; n < 300; n++) {
      let key = ''
      const length = n % 70
      for (let i = 0; i < length; i++) key += String.fromCharCode(Math.floor(random() * (n % 3 === 0 ? 128 : 65536)))
      samples.push(key)
    }
    for (const key of samples) {
      const k0 = Math.floor(random() * 2 ** 32)
      const k1 = Math.floor(random() * 2 ** 32)
      fingerprintKey(key, k0, k1, out)
      expect([out[0] >>> 0, out[1] >>> 0]).toEqual(keyedFingerprint(key, k0, k1))
    }
  })

  it('depends on the seed: a client who does not know it cannot choose colliding keys', () => {
    const a = new Int32Array(2)
    const b = new Int32Array(2)
    fingerprintKey('203.0.113.7', 1, 2, a)
    fingerprintKey('203.0.113.7', 1, 3, b)
    expect(a[0]).not.toBe(b[0])
    expect(a[1]).not.toBe(b[1])
    const seeds = new Set<string>()
    for (let i = 0; i < 20; i++) seeds.add(native.keyedSeed().join(','))
    expect(seeds.size).toBe(20)
  })
})
