// Gray routing's rules (lib/components/routing): every term on every request shape, the bounds, bad rules refused
// whole with the rule, term and value named, odd requests never throwing, and the weights' shares (exact with an
// injected random; stable and close to the weight with a key).
import { afterEach, describe, expect, it } from 'vitest'

import { GrayRouter, InvalidOptionError, type RouteRule } from '../../lib/index'
import { ROUTING_LIMITS, stableHash } from '../../lib/components/routing/route-rules'
import { argumentOf, fieldOf } from '../helpers/typed-errors'

const routers: GrayRouter[] = []
afterEach(() => routers.splice(0).forEach((r) => r.close()))

function router(rules: RouteRule[], extra: Partial<ConstructorParameters<typeof GrayRouter>[0]> = {}): GrayRouter {
  const r = new GrayRouter({ groups: ['stable', 'v2', 'canary'], fallback: 'stable', rules, ...extra })
  routers.push(r)
  return r
}

const v2 = (when: string) => router([{ when, group: 'v2' }])

describe('GrayRouter rules: terms', () => {
  it('header =, != and presence, case-blind names, on node, undici, fetch and plain requests', () => {
    const eq = v2('header(X-Version) = v2')
    expect(eq.route({ headers: { 'x-version': 'v2' }, rawHeaders: [] })).toBe('v2') // node: lower-case keys
    expect(eq.route({ headers: { 'X-Version': 'v2' } })).toBe('v2') // undici object, any case
    expect(eq.route({ headers: ['X-VERSION', 'v2'] })).toBe('v2') // undici flat array
    expect(eq.route({ headers: [['x-version', 'v2']] })).toBe('v2') // pairs
    expect(eq.route({ headers: new Map([['x-version', 'v2']]) })).toBe('v2')
    expect(eq.route(new Request('http://h/p', { headers: { 'X-Version': 'v2' } }))).toBe('v2')
    expect(eq.route(new Headers({ 'x-version': 'v2' }))).toBe('v2')
    expect(eq.route({ headers: { 'x-version': 'v1' } })).toBe('stable')
    expect(eq.route({ headers: { 'x-version': 'V2' } })).toBe('stable') // values are compared exactly
    expect(eq.route({ headers: {} })).toBe('stable')

    const ne = v2('header(x-version) != v1')
    expect(ne.route({ headers: { 'x-version': 'v3' } })).toBe('v2')
    expect(ne.route({ headers: {} })).toBe('v2') // absent: not v1
    expect(ne.route({ headers: { 'x-version': 'v1' } })).toBe('stable')
    expect(ne.route({ headers: { 'x-version': 42 } })).toBe('stable') // not a string: matches nothing

    const present = v2('header(x-beta)')
    expect(present.route({ headers: { 'x-beta': '' } })).toBe('v2')
    expect(present.route({ headers: { 'x-other': '1' } })).toBe('stable')
  })

  it('cookie, query, method and path prefix', () => {
    const cookie = v2('cookie(track) = beta')
    expect(cookie.route({ headers: { cookie: 'a=1; track=beta; b=2' } })).toBe('v2')
    expect(cookie.route({ headers: { cookie: 'track=beta' } })).toBe('v2')
    expect(cookie.route({ headers: { cookie: 'mytrack=beta; track=alpha' } })).toBe('stable') // not a cookie's start
    expect(cookie.route({ headers: { cookie: 'track=betamax' } })).toBe('stable')

    const query = v2('query(ab) = new value')
    expect(query.route({ path: '/x?ab=new%20value' })).toBe('v2') // decoded when escaped
    expect(query.route({ url: '/x?z=1&ab=new+value#frag' })).toBe('v2')
    expect(query.route({ path: '/x?cab=new%20value' })).toBe('stable')
    expect(query.route({ path: '/x?ab=%E0%A4%A' })).toBe('stable') // a malformed escape
    expect(query.route({ path: '/x#?ab=new%20value' })).toBe('stable') // in the fragment
    expect(query.route(new Request('http://h:1/x?ab=new%20value'))).toBe('v2')

    const method = v2('method = post')
    expect(method.route({ method: 'POST' })).toBe('v2')
    expect(method.route({ method: 'post' })).toBe('v2')
    expect(method.route({ method: 'GET' })).toBe('stable')
    expect(method.route({})).toBe('stable')

    const path = v2('path ^= /api/')
    expect(path.route({ url: '/api/users?x=1' })).toBe('v2')
    expect(path.route({ path: '/api/' })).toBe('v2')
    expect(path.route({ url: '/apix' })).toBe('stable')
    expect(path.route({ url: '/?next=/api/' })).toBe('stable')
    expect(path.route(new Request('https://shop.example:8443/api/cart'))).toBe('v2')
    expect(path.route({ url: 'relative/api/' })).toBe('stable')
  })

  it('every term of a rule must match; the first rule that matches wins', () => {
    const r = router([
      { when: 'header(x-version) = v2 && method = GET && path ^= /api/', group: 'v2' },
      { when: 'header(x-version) = v2', group: 'canary' },
    ])
    expect(r.route({ method: 'GET', url: '/api/a', headers: { 'x-version': 'v2' } })).toBe('v2')
    expect(r.route({ method: 'POST', url: '/api/a', headers: { 'x-version': 'v2' } })).toBe('canary')
    expect(r.route({ method: 'GET', url: '/api/a' })).toBe('stable')
  })
})

describe('GrayRouter rules: refused whole, naming the rule, the term and the value', () => {
  it('from the constructor (InvalidOptionError) and configure (InvalidArgumentError)', () => {
    expect(fieldOf(() => router([{ when: 'header(x) = a && weight = 130', group: 'v2' }]))).toBe('rules[0].when')
    expect(() => router([{ when: 'header(x) = a && weight = 130', group: 'v2' }])).toThrow(
      /weight = <an integer 0-100> \(term 2\), got "weight = 130"/,
    )
    const r = router([{ when: 'header(x-version) = v2', group: 'v2' }])
    const bad: Array<[RouteRule[], string, RegExp]> = [
      [[{ when: 'header(x) = 1', group: 'v3' }], 'rules[0].group', /one of the router's groups/],
      [[{ when: 'host = a', group: 'v2' }], 'rules[0].when', /header\(<name>\) = <value>.*got "host = a"/],
      [[{ when: 'header(bad name) = 1', group: 'v2' }], 'rules[0].when', /term 1/],
      [[{ when: 'header(x) = a\u0001b', group: 'v2' }], 'rules[0].when', /control characters/],
      [[{ when: 'cookie(a) != b', group: 'v2' }], 'rules[0].when', /only headers take !=/],
      [[{ when: 'path ^= api', group: 'v2' }], 'rules[0].when', /starting with '\/'/],
      [[{ when: 'weight = 10 && weight = 20', group: 'v2' }], 'rules[0].when', /one weight a rule \(term 2\)/],
      [[{ when: '', group: 'v2' }], 'rules[0].when', /terms joined by &&/],
      [[{ when: 'x'.repeat(257), group: 'v2' }], 'rules[0].when', /1-256 characters/],
      [[{ when: Array(9).fill('header(a)').join(' && '), group: 'v2' }], 'rules[0].when', /at most 8 terms/],
      [[{ when: 'header(a)', group: 'v2', extra: 1 } as RouteRule], 'rules[0].extra', /absent/],
      [Array(65).fill({ when: 'header(a)', group: 'v2' }), 'rules', /at most 64 rules/],
      [[{ when: 'header(a)', group: 'v2' }, 'nope' as never], 'rules[1]', /a rule object/],
    ]
    for (const [rules, field, message] of bad) {
      expect(argumentOf(() => r.configure(rules))).toBe(field)
      expect(() => r.configure(rules)).toThrow(message)
    }
    // 16 KB of rule text in all: 64 rules of 256 characters is more.
    const long = Array.from({ length: 64 }, (_, i) => ({
      when: `header(a) = ${String(i).padEnd(244, 'x')}`,
      group: 'v2',
    }))
    expect(() => r.configure(long)).toThrow(/within 16384 characters of rules in all/)
    expect(r.rules).toEqual([{ when: 'header(x-version) = v2', group: 'v2' }]) // nothing of it applied
    expect(r.version).toBe(2)
  })

  it('checks its own options: groups, fallback, random', () => {
    expect(fieldOf(() => new GrayRouter({ groups: [], fallback: 'a' }))).toBe('groups')
    expect(fieldOf(() => new GrayRouter({ groups: ['a', 'a'], fallback: 'a' }))).toBe('groups[1]')
    expect(fieldOf(() => new GrayRouter({ groups: ['a b'], fallback: 'a b' }))).toBe('groups[0]')
    expect(fieldOf(() => new GrayRouter({ groups: Array(17).fill('a'), fallback: 'a' }))).toBe('groups')
    expect(fieldOf(() => new GrayRouter({ groups: ['a'], fallback: 'b' }))).toBe('fallback')
    expect(fieldOf(() => new GrayRouter({ groups: ['a'], fallback: 'a', random: 1 as never }))).toBe('random')
    expect(() => new GrayRouter({ groups: ['a'], fallback: 'a', rules: 'x' as never })).toThrow(InvalidOptionError)
    expect(ROUTING_LIMITS).toMatchObject({ rules: 64, termsPerRule: 8, text: 256, ruleText: 16384 })
  })
})

describe('GrayRouter: odd requests never throw and match nothing', () => {
  it('odd shapes, duplicates, non-strings, a throwing getter, a 1 MB value', () => {
    const r = router([
      { when: 'header(x-version) = v2', group: 'v2' },
      { when: 'cookie(track) = beta', group: 'canary' },
    ])
    const odd: unknown[] = [
      undefined,
      null,
      42,
      'GET /',
      [],
      { headers: 'x-version: v2' },
      { headers: ['x-version'] },
      { headers: [['x-version']] },
      { headers: { 'x-version': ['v1', 'v2'] } }, // sent twice: the first counts
      { headers: { 'x-version': [7] } },
      { headers: { 'x-version': Buffer.from('v2') } },
      { headers: { cookie: 42 } },
      { headers: Object.create(null) },
      { headers: { __proto__: { 'x-version': 'v2' } } }, // inherited: not the request's
      {
        get headers() {
          throw new Error('exotic')
        },
      },
      { headers: { 'x-version': 'v'.repeat(1 << 20), cookie: `${'a'.repeat(1 << 20)}; track=alpha` } },
    ]
    for (const request of odd) expect(r.route(request)).toBe('stable')
    expect(r.route({ headers: { 'x-version': ['v2', 'v1'] } })).toBe('v2')
    expect(r.route({ headers: ['x-version', 'v2', 'x-version', 'v1'] })).toBe('v2')
    expect(r.route({ headers: { cookie: `${'a=b; '.repeat(50_000)}track=beta` } })).toBe('canary')
    expect(r.stats().routed).toEqual({ stable: odd.length, v2: 2, canary: 1 })
  })
})

describe('GrayRouter weights', () => {
  it('with an injected random, exactly the weight’s share of the requests that pass the other terms', () => {
    let i = 0
    const random = () => (i++ % 100) / 100
    const r = router([{ when: 'header(x-version) = v2 && weight = 30', group: 'v2' }], { random })
    const counts = { stable: 0, v2: 0, canary: 0 }
    for (let n = 0; n < 1000; n++) counts[r.route({ headers: { 'x-version': 'v2' } }) as 'v2']++
    expect(counts).toEqual({ stable: 700, v2: 300, canary: 0 })
    expect(i).toBe(1000)
    r.route({ headers: {} })
    expect(i).toBe(1000) // a request the terms refuse draws nothing
    r.configure([{ when: 'weight = 0', group: 'v2' }])
    expect(r.route({})).toBe('stable')
    r.configure([{ when: 'weight = 100', group: 'v2' }])
    expect(r.route({})).toBe('v2')
    expect(i).toBe(1000)
  })

  it('with a key: the same key always gets the same group, and the share over 10 000 keys is within 2 points', () => {
    const random = () => {
      throw new Error('a key decides, not random')
    }
    const r = router([{ when: 'weight = 30', group: 'v2' }], { random })
    const other = router([{ when: 'weight = 30', group: 'v2' }], { random })
    let inV2 = 0
    for (let k = 0; k < 10_000; k++) {
      const group = r.route({}, `user-${k}`)
      expect(other.route({}, `user-${k}`)).toBe(group) // another router, as on another host
      expect(r.route({}, `user-${k}`)).toBe(group)
      if (group === 'v2') inV2++
    }
    expect(Math.abs(inV2 / 10_000 - 0.3)).toBeLessThan(0.02)
    // Raised to 50: every client in v2 at 30 stays there.
    const at30 = Array.from({ length: 2000 }, (_, k) => r.route({}, k))
    r.configure([{ when: 'weight = 50', group: 'v2' }])
    const at50 = Array.from({ length: 2000 }, (_, k) => r.route({}, k))
    expect(at30.every((g, k) => g !== 'v2' || at50[k] === 'v2')).toBe(true)
    expect(at50.filter((g) => g === 'v2').length).toBeGreaterThan(at30.filter((g) => g === 'v2').length)
  })

  it('the hash is fixed: the same on every host and in every release', () => {
    expect(stableHash('user-1')).not.toBe(stableHash('user-2'))
    expect(stableHash('user-1', 1)).not.toBe(stableHash('user-1', 2))
    expect(stableHash('abc')).toBe(STABLE_ABC)
  })
})

// FNV-1a of 'abc' (0x1a47e90b) through murmur3's finaliser, worked out once: a change to the hash moves clients.
const STABLE_ABC = (() => {
  let h = 0x1a47e90b
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
})()
