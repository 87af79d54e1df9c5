// Allow and deny lists (docs/rules/access-lists.md): matching by the longest prefix, checked against a plain
// reference on random lists; live changes seen by another member of a shared list at its next match; the bound.
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'

import { AccessList, InvalidArgumentError } from '../../lib/index'
import { ALLOWED, DENIED, NO_ENTRY } from '../../lib/components/access/access-list'
import '../helpers/cleanup-regions'
import { uniqueName } from '../helpers/unique-name'

const lists: AccessList[] = []
const make = (options?: ConstructorParameters<typeof AccessList>[0]) => {
  const list = new AccessList(options)
  lists.push(list)
  return list
}
afterEach(() => lists.splice(0).forEach((l) => l.close()))

const v4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')

describe('AccessList', () => {
  it('decides by the longest prefix that holds the address; IPv4-mapped clients are IPv4 clients', () => {
    const list = make({
      entries: {
        '10.0.0.0/8': 'deny',
        '10.1.0.0/16': 'allow',
        '10.1.2.3': 'deny',
        '2001:db8::/32': 'deny',
        '2001:db8:1::/48': 'allow',
      },
    })
    const cases: Array<[string, string | undefined]> = [
      ['10.0.0.1', 'deny'],
      ['10.1.0.1', 'allow'],
      ['10.1.2.3', 'deny'],
      ['10.1.2.4', 'allow'],
      ['10.255.255.255', 'deny'],
      ['9.255.255.255', undefined],
      ['11.0.0.0', undefined],
      ['::ffff:10.1.2.3', 'deny'],
      ['::ffff:10.1.9.9', 'allow'],
      ['2001:db8::5', 'deny'],
      ['2001:db8:1:ffff::1', 'allow'],
      ['2001:db9::1', undefined],
      ['not an address', undefined],
    ]
    for (const [address, mode] of cases) expect(list.check(address), address).toBe(mode)
    expect(list.stats()).toMatchObject({ entries: 5, intervals4: 5, intervals6: 3, keys: 0, version: 1 })
  })

  it('matches what a plain scan of every range finds, for random nested lists (property)', () => {
    const range = fc.record({ base: fc.integer({ min: 0, max: 0xffffffff }), prefix: fc.integer({ min: 0, max: 32 }) })
    fc.assert(
      fc.property(
        fc.array(fc.tuple(range, fc.boolean()), { maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 40 }),
        (ranges, probes) => {
          const entries: Record<string, 'allow' | 'deny'> = {}
          const plain: Array<[number, number, number, 'allow' | 'deny']> = []
          for (const [{ base, prefix }, allow] of ranges) {
            const size = 2 ** (32 - prefix)
            const start = Math.floor(base / size) * size
            const text = `${v4(start)}/${prefix}`
            entries[text] = allow ? 'allow' : 'deny'
            plain.push([start, start + size - 1, prefix, entries[text]])
          }
          const list = new AccessList({ entries })
          try {
            const edges = plain.flatMap(([s, e]) => [s, e, Math.max(0, s - 1), Math.min(0xffffffff, e + 1)])
            for (const address of [...probes, ...edges]) {
              let best: [number, string] | undefined
              for (const [s, e, prefix] of plain) {
                if (address >= s && address <= e && (best === undefined || prefix >= best[0]))
                  best = [prefix, entries[`${v4(s)}/${prefix}`]]
              }
              expect(list.check(v4(address)), v4(address)).toBe(best?.[1])
            }
          } finally {
            list.close()
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it('matches IPv6 as a plain scan does, carries across words included (property)', () => {
    const word = fc.integer({ min: 0, max: 0xffffffff })
    // Few distinct high words, so that ranges nest and touch; prefixes anywhere in the 128 bits.
    const address = fc.tuple(fc.constantFrom(0, 0x20010db8, 0xffffffff), word, fc.constantFrom(0, 0xffffffff), word)
    const toBig = (w: number[]) => w.reduce((acc, x) => (acc << 32n) | BigInt(x >>> 0), 0n)
    const text = (n: bigint) => {
      const groups: string[] = []
      for (let i = 7; i >= 0; i--) groups.push(((n >> BigInt(16 * i)) & 0xffffn).toString(16))
      return groups.join(':')
    }
    const max = (1n << 128n) - 1n
    fc.assert(
      fc.property(
        fc.array(fc.tuple(address, fc.integer({ min: 0, max: 128 }), fc.boolean()), { maxLength: 30 }),
        fc.array(address, { maxLength: 30 }),
        (ranges, probes) => {
          const entries: Record<string, 'allow' | 'deny'> = {}
          const plain: Array<[bigint, bigint, number, string]> = []
          for (const [w, prefix, allow] of ranges) {
            const size = 1n << BigInt(128 - prefix)
            const start = (toBig(w) / size) * size
            const key = `${text(start)}/${prefix}`
            entries[key] = allow ? 'allow' : 'deny'
            plain.push([start, start + size - 1n, prefix, key])
          }
          const list = new AccessList({ entries })
          try {
            const edges = plain.flatMap(([s, e]) => [s, e, s > 0n ? s - 1n : s, e < max ? e + 1n : e])
            for (const a of [...probes.map(toBig), ...edges]) {
              let best: [number, string] | undefined
              for (const [s, e, prefix, key] of plain)
                if (a >= s && a <= e && (best === undefined || prefix >= best[0])) best = [prefix, entries[key]]
              // Addresses in ::ffff:0:0/96 are IPv4 clients: an IPv6 range says nothing about them.
              const mapped = a >> 32n === 0xffffn
              expect(list.check(text(a)), text(a)).toBe(mapped ? undefined : best?.[1])
            }
          } finally {
            list.close()
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it('matches keys; configure is validated whole; remove, clear and the bound', () => {
    const list = make({ maxEntries: 3 })
    list.configure({ 'key:ops': 'allow', '198.51.100.0/24': 'deny' })
    expect(list.matchKey('ops')).toBe(ALLOWED)
    expect(list.matchKey('other')).toBe(NO_ENTRY)
    expect(list.matchAddress('198.51.100.9')).toBe(DENIED)
    expect(() => list.configure({ '1.1.1.1': 'deny', nope: 'deny' })).toThrow(InvalidArgumentError)
    expect(() => list.configure({ '1.1.1.1': 'block' as never })).toThrow(/'allow' or 'deny'/)
    expect(list.list()).toEqual([
      { entry: '198.51.100.0/24', mode: 'deny' },
      { entry: 'key:ops', mode: 'allow' },
    ])
    list.set('1.1.1.1', 'deny')
    expect(() => list.set('2.2.2.2', 'deny')).toThrow(/at most 3 entries/)
    expect(list.check('2.2.2.2')).toBeUndefined()
    // A change that removes as many as it adds fits.
    list.configure({ '1.1.1.1': null, '2.2.2.2': 'deny' })
    expect([list.check('1.1.1.1'), list.check('2.2.2.2')]).toEqual([undefined, 'deny'])
    list.set('2.2.2.2', 'allow') // a new mode for an entry it has
    expect(list.check('2.2.2.2')).toBe('allow')
    expect(list.remove('2.2.2.2/32')).toBe(true)
    expect(list.remove('2.2.2.2')).toBe(false)
    list.clear()
    expect(list.list()).toEqual([])
    expect(list.matchKey('ops')).toBe(NO_ENTRY)
  })

  it('is one list for the host when shared: a change by one member applies at the other’s next match', () => {
    const shared = uniqueName('acl')
    const a = make({ shared, entries: { '203.0.113.0/24': 'deny' } })
    const b = make({ shared, entries: { '203.0.113.0/24': 'allow', '192.0.2.1': 'deny' } }) // not a fresh list
    expect(b.list()).toEqual([{ entry: '203.0.113.0/24', mode: 'deny' }])
    expect(b.check('203.0.113.5')).toBe('deny')
    a.configure({ '203.0.113.0/24': null, '2001:db8::/32': 'deny' })
    expect(b.check('203.0.113.5')).toBeUndefined()
    expect(b.check('2001:db8::1')).toBe('deny')
    expect(b.version).toBe(2)
    // A member that writes after another rereads the slots first: no entry is written twice.
    b.configure({ '2001:db8::/32': 'allow' })
    a.configure({ '2001:db8::/32': 'deny' })
    expect(b.list()).toEqual([{ entry: '2001:db8::/32', mode: 'deny' }])
  })

  it('refuses bad options, naming them', () => {
    expect(() => make({ maxEntries: 0 })).toThrow(/maxEntries/)
    expect(() => make({ maxEntries: 1.5 })).toThrow(/maxEntries/)
    expect(() => make({ entries: { '10.0.0.0/8': null } as never })).toThrow(/entries/)
    expect(() => make({ entries: 'all' as never })).toThrow(/entries/)
    expect(() => make({ maxEntries: 1, entries: { '1.1.1.1': 'deny', '2.2.2.2': 'deny' } })).toThrow(/at most 1/)
  })
})
