import { describe, expect, it } from 'vitest'

import { listRegions } from '../../lib/foundation/regions/regions'

import {
  type Breaker,
  type BreakerState,
  BreakerGroup,
  BulkheadPool,
  CircuitBreaker,
  InvalidArgumentError,
  InvalidOptionError,
  SreBreaker,
} from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

/** A stand-in breaker whose state the test sets, and that records whether the group closed it. */
class FakeBreaker implements Breaker {
  closed = false
  state: BreakerState = 'closed'
  readonly usesDuration = false
  constructor(
    readonly key: string,
    readonly shared: string | undefined,
  ) {}
  tryAcquire = () => this.state !== 'open'
  recordSuccess = () => undefined
  recordFailure = () => undefined
  execute = <T>(fn: () => T) => Promise.resolve(fn())
  close() {
    this.closed = true
  }
}

function group(options: { maxKeys?: number; idleTimeout?: number } = {}) {
  const clock = new ManualClock(0)
  const made: FakeBreaker[] = []
  const g = new BreakerGroup(
    (key, shared) => {
      const b = new FakeBreaker(key, shared)
      made.push(b)
      return b
    },
    { now: clock.now, ...options },
  )
  return { g, clock, made }
}

describe('BreakerGroup', () => {
  it('holds 1000 keys by default, 256 when shared (each shared key is a region: docs/guide/trust.md); a pool, 64', () => {
    expect(new BreakerGroup(() => new SreBreaker()).maxKeys).toBe(1000)
    const shared = new BreakerGroup((_k, s) => new SreBreaker({ shared: s }), { shared: uniqueName('bg-max') })
    expect(shared.maxKeys).toBe(256)
    expect(new BreakerGroup(() => new SreBreaker(), { shared: uniqueName('bg'), maxKeys: 2000 }).maxKeys).toBe(2000)
    expect(new BulkheadPool().maxKeys).toBe(1000)
    const pool = new BulkheadPool({ shared: uniqueName('bp-max') })
    expect(pool.maxKeys).toBe(64)
    shared.close()
    pool.close()
  })

  it('makes one breaker per key on first use and returns it after', () => {
    const { g, made } = group()
    const a = g.get('orders')
    expect(g.get('orders')).toBe(a)
    expect(g.get('users')).not.toBe(a)
    expect(made.map((b) => b.key)).toEqual(['orders', 'users'])
    expect(g.size).toBe(2)
  })

  it('drops the least recently used key past maxKeys and closes its breaker', () => {
    const { g, clock } = group({ maxKeys: 3 })
    const [a, b, c] = ['a', 'b', 'c'].map((k) => g.get(k) as FakeBreaker)
    clock.advance(1)
    g.get('a')
    clock.advance(1)
    g.get('d')
    expect(g.keys().sort()).toEqual(['a', 'c', 'd'])
    expect([a.closed, b.closed, c.closed]).toEqual([false, true, false])
    clock.advance(1)
    g.get('e') // c is now the least recently used
    expect(g.keys().sort()).toEqual(['a', 'd', 'e'])
    expect(c.closed).toBe(true)
  })

  it('never holds more than maxKeys, however many keys pass through', () => {
    const { g, clock, made } = group({ maxKeys: 100 })
    for (let i = 0; i < 10_000; i++) {
      clock.advance(1)
      g.get(`/orders/${i}`)
      g.get(`/hot/${i % 10}`)
      expect(g.size).toBeLessThanOrEqual(100)
    }
    expect(made.filter((b) => !b.closed)).toHaveLength(g.size)
    // The ten hot keys, used on every step, were never dropped.
    expect(made.filter((b) => b.key.startsWith('/hot/'))).toHaveLength(10)
  })

  it('drops idle closed breakers when a new key arrives; an idle open one stays', () => {
    const { g, clock } = group({ idleTimeout: 1000 })
    const idle = g.get('idle') as FakeBreaker
    const open = g.get('open') as FakeBreaker
    open.state = 'open'
    clock.advance(1000)
    expect(g.has('idle')).toBe(true)
    expect(g.get('idle')).toBe(idle) // held until room is needed: the same breaker (closed, it is as good as new)
    clock.advance(1000)
    g.get('new')
    expect(idle.closed).toBe(true)
    expect(g.keys().sort()).toEqual(['new', 'open'])
  })

  it('delete and close drop keys and close their breakers', () => {
    const { g, made } = group()
    g.get('a')
    g.get('b')
    expect(g.delete('a')).toBe(true)
    expect(g.delete('a')).toBe(false)
    g.close()
    expect(g.size).toBe(0)
    expect(made.every((b) => b.closed)).toBe(true)
  })

  it('shared: gives each key its own valid region name, the same in every group of that name', () => {
    const name = uniqueName('grp')
    const clock = new ManualClock(1000)
    const make = () =>
      new BreakerGroup((_key, shared) => new SreBreaker({ shared, now: clock.now, random: () => 0 }), {
        shared: name,
        now: clock.now,
      })
    const worker1 = make()
    const worker2 = make()
    const url = 'https://api.example.com/orders?id=1&x=ü'
    const one = (g: BreakerGroup<SreBreaker>, key: string) => g.get(key) as SreBreaker
    for (let i = 0; i < 200; i++) one(worker1, url).recordFailure()
    expect(one(worker2, url).shared).toBe(one(worker1, url).shared)
    expect(one(worker2, url).stats()).toMatchObject({ calls: 200, state: 'open' })
    expect(one(worker2, url).tryAcquire()).toBe(false)
    // Keys that differ only in characters a region name cannot hold still get their own breaker.
    expect(one(worker1, 'a/b').shared).not.toBe(one(worker1, 'a?b').shared)
    expect(one(worker1, 'a/b').shared).toMatch(/^[A-Za-z0-9._-]+$/)
    expect(one(worker2, 'a/b').stats().calls).toBe(0)
    worker1.close()
    worker2.close()
  })

  it('shared: the longest group name with a long, unsafe key still makes a valid region, and no key in its name', () => {
    const name = `${uniqueName('g')}-`.padEnd(64, 'x')
    const g = new BreakerGroup((_key, shared) => new CircuitBreaker({ shared }), { shared: name })
    const key = `https://example.com/${'path/'.repeat(40)}?q=${'ü'.repeat(20)}`
    const cb = g.get(key) as CircuitBreaker
    // The group's name and an HMAC of the key under the host's secret: nothing a local user could test a key against.
    expect(cb.shared).toMatch(new RegExp(`^${name}\\.[A-Za-z0-9_-]{16}$`))
    expect(listRegions().some((r) => r.includes('example'))).toBe(false)
    expect(cb.tryAcquire()).toBe(true)
    g.close()
  })

  it('refuses a factory that would make keys share one breaker', () => {
    const ignoresName = new BreakerGroup(() => new FakeBreaker('x', 'fixed'), { shared: uniqueName('g') })
    expect(() => ignoresName.get('a')).toThrow(InvalidOptionError)
    expect(() => ignoresName.get('a')).toThrow(/passes its second argument/)
    const sameName = new BreakerGroup((key) => new FakeBreaker(key, 'fixed'))
    sameName.get('a')
    expect(() => sameName.get('b')).toThrow(/already another key's/)
    const notBreaker = new BreakerGroup(() => 42 as unknown as FakeBreaker)
    expect(() => notBreaker.get('a')).toThrow(/option `factory` must be a function returning a component/)
    expect(() => new BreakerGroup(undefined as never)).toThrow(/option `factory` must be a function/)
    expect(() => group().g.get(7 as unknown as string)).toThrow(InvalidArgumentError)
  })
})
