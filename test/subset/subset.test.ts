import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { ConsistentHash } from '../../lib/components/subset/consistent-hash'
import { fnv1a32 } from '../../lib/components/subset/fnv1a32'
import { subset } from '../../lib/components/subset/subset'

// A small seeded generator (mulberry32), so that the fleets below are the same on every run.
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function pick(random: () => number, alphabet: string, length: number): string {
  let s = ''
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(random() * alphabet.length)]
  return s
}

/** 400 names shaped like Kubernetes pod names of a few deployments. */
function backends(): string[] {
  const random = seeded(400)
  const deployments = [
    'business-1017704-7d965bf447',
    'community-1017702-776667f8dd',
    'web-1017700-5cf845955',
    'app-1017698-5f99bdc4f5',
  ]
  const names = new Set<string>()
  while (names.size < 400) {
    const d = deployments[Math.floor(random() * deployments.length)]
    names.add(`test-service-${d}-${pick(random, 'bcdfghjklmnpqrstvwxz2456789', 5)}`)
  }
  return [...names]
}

/** 8000 client ids shaped like the first 12 characters of a UUID. */
function clients(): string[] {
  const random = seeded(8000)
  const hex = '0123456789abcdef'
  return Array.from({ length: 8000 }, () => `${pick(random, hex, 8)}-${pick(random, hex, 3)}`)
}

/** FNV-1a 32 computed the plain way over Buffer's UTF-8 bytes: an independent check of the string walker. */
function fnvOfBytes(text: string): number {
  let h = 0x811c9dc5
  for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0
  return h
}

describe('fnv1a32', () => {
  it('matches the golden values', () => {
    expect(fnv1a32('')).toBe(2166136261)
    expect(fnv1a32('a')).toBe(3826002220)
    expect(fnv1a32('hello')).toBe(1335831723)
  })

  it('hashes the UTF-8 bytes of any string, as Go hashes a string', () => {
    for (const s of [
      'é',
      'naïve',
      '€uro',
      '日本語',
      'emoji 😀!',
      'lone \ud800 high',
      'lone \udc00 low',
      'end \ud83d',
    ]) {
      expect(fnv1a32(s)).toBe(fnvOfBytes(s))
    }
  })
})

describe('subset (reference goldens)', () => {
  const five = ['a', 'b', 'c', 'd', 'e']

  it('picks the same members as the reference', () => {
    expect(subset('x', five, 2)).toEqual(['e', 'b'])
    expect(subset('y', five, 2)).toEqual(['d', 'c'])
    expect(subset('z', five, 2)).toEqual(['d', 'b'])
  })

  it('builds the ring over distinct members', () => {
    expect(subset('1', ['2', '2', '2', '3'], 3)).toEqual(['2', '3'])
  })

  it('returns every member (a copy) when there are at most n', () => {
    const members = ['a', 'b', 'c']
    const out = subset('x', members, 3)
    expect(out).toEqual(members)
    expect(out).not.toBe(members)
    expect(subset('x', members, 10)).toEqual(members)
  })

  it('fixes the reference: n = 0 gives [] (it loops forever), a negative n is an error', () => {
    expect(subset('x', five, 0)).toEqual([])
    expect(subset('x', [], 0)).toEqual([])
    expect(() => subset('x', five, -1)).toThrow(InvalidArgumentError)
    expect(() => subset('x', five, 1.5)).toThrow(InvalidArgumentError)
    expect(() => new ConsistentHash(five).getN('x', -2)).toThrow(/argument `n` must be an integer >= 0, got -2/)
  })

  it('picks members of any type by their string form', () => {
    const hosts = five.map((name) => ({ name, toString: () => name }))
    expect(subset('x', hosts, 2).map((h) => h.name)).toEqual(['e', 'b'])
  })
})

describe('ConsistentHash', () => {
  it('is reusable: one ring gives what subset gives, for every key', () => {
    const fleet = backends()
    const ring = new ConsistentHash(fleet)
    for (const client of clients().slice(0, 40)) expect(ring.getN(client, 25)).toEqual(subset(client, fleet, 25))
  })

  it('get(key) is the first member getN walks to; an empty ring gives undefined and []', () => {
    const ring = new ConsistentHash(['a', 'b', 'c', 'd', 'e'])
    expect(ring.get('x')).toBe('e')
    expect(ring.get('y')).toBe('d')
    const empty = new ConsistentHash<string>()
    expect(empty.get('x')).toBeUndefined()
    expect(empty.getN('x', 3)).toEqual([])
  })

  it('walks a full turn at most, and caps n at the number of members', () => {
    const ring = new ConsistentHash(['a', 'b', 'c'], { replicas: 1 })
    expect(ring.getN('x', 10).sort()).toEqual(['a', 'b', 'c'])
  })

  it('add, remove and set change the ring as the reference does; repeats change nothing', () => {
    const ring = new ConsistentHash(['a', 'b', 'c', 'd'])
    ring.add('e')
    ring.add('e')
    expect(ring.size).toBe(5)
    expect(ring.getN('x', 2)).toEqual(['e', 'b'])
    ring.remove('zz')
    ring.remove('e')
    expect(ring.has('e')).toBe(false)
    expect(ring.getN('x', 5)).not.toContain('e')
    ring.set(['a', 'b', 'c', 'd', 'e'])
    expect(ring.members()).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(ring.getN('y', 2)).toEqual(['d', 'c'])
  })

  it('rejects bad options', () => {
    expect(() => new ConsistentHash([], { replicas: 0 })).toThrow(/option `replicas`/)
  })
})

describe('subset distribution and relocation (400 backends, 8000 clients, 25 each)', () => {
  const fleet = backends()
  const ids = clients()

  it('no backend gets more than 600 clients (the mean is 500)', () => {
    const ring = new ConsistentHash(fleet)
    const load = new Map<string, number>()
    for (const id of ids) for (const b of ring.getN(id, 25)) load.set(b, (load.get(b) ?? 0) + 1)
    const counts = [...load.values()]
    expect(counts.reduce((a, b) => a + b, 0)).toBe(8000 * 25)
    expect(Math.max(...counts)).toBeLessThanOrEqual(600)
  })

  it('removing one backend moves fewer than 0.5 % of the picks', () => {
    const ring = new ConsistentHash(fleet)
    const before = ids.map((id) => new Set(ring.getN(id, 25)))
    for (const removed of [fleet[0], fleet[199], fleet[399]]) {
      const after = new ConsistentHash(fleet)
      after.remove(removed)
      let moved = 0
      ids.forEach((id, i) => {
        const now = new Set(after.getN(id, 25))
        for (const b of before[i]) if (!now.has(b)) moved++
      })
      expect(moved).toBeGreaterThan(0)
      expect(moved / (8000 * 25)).toBeLessThan(0.005)
    }
  })
})
