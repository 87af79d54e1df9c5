import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'
import { InboundGuard } from '../../lib/guards/inbound/inbound-guard'
import { KeyedLimiter, type KeyedLimiterTableOptions } from '../../lib/components/ratelimit/keyed-limiter'
import { TokenBucket } from '../../lib/components/ratelimit/token-bucket'
import { ManualClock } from '../helpers/manual-clock'
import { fieldOf } from '../helpers/typed-errors'

function table(clock: ManualClock, options: Partial<KeyedLimiterTableOptions> = {}): KeyedLimiter {
  return new KeyedLimiter({ rate: 10, burst: 5, maxKeys: 1000, now: clock.now, ...options })
}

function takes(limiter: KeyedLimiter, key: string, times: number, n = 1): number {
  let admitted = 0
  for (let i = 0; i < times; i++) if (limiter.tryAcquire(key, n)) admitted++
  return admitted
}

describe('KeyedLimiter, table form', () => {
  it('gives each key a token bucket: a burst, then the rate', () => {
    const clock = new ManualClock(1000)
    const keyed = table(clock)
    expect(takes(keyed, 'alice', 20)).toBe(5)
    expect(takes(keyed, 'bob', 20)).toBe(5)
    expect(keyed.retryAfterMs('alice')).toBeCloseTo(100, 3)
    expect(keyed.available('alice')).toBe(0)
    clock.advance(250) // 2.5 tokens back
    expect(keyed.available('alice')).toBeCloseTo(2.5, 3)
    expect(takes(keyed, 'alice', 20)).toBe(2)
    expect(keyed.retryAfterMs('alice', 2)).toBeCloseTo(150, 3)
    clock.advance(10_000)
    expect(takes(keyed, 'alice', 20, 2)).toBe(2) // 5 tokens: two takes of 2
    expect(keyed.tryAcquire('alice', 6)).toBe(false) // more than the burst never fits
    expect(keyed.retryAfterMs('alice', 6)).toBe(Infinity)
    expect(keyed.available('carol')).toBe(5) // a new key starts full
    expect(keyed.has('alice') && !keyed.has('carol')).toBe(true)
    expect(keyed.size).toBe(2)
    expect(keyed.get('alice')).toBeUndefined() // no limiter object per key
    const s = keyed.stats()
    expect(s).toMatchObject({ size: 2, maxKeys: 1000, created: 2, evicted: 0, invalidArguments: 0 })
    expect(s.table).toMatchObject({ rate: 10, burst: 5, capacity: 2000, overflow: 10, refused: 66, longKeys: 0 })
    keyed.close()
  })

  it('admits exactly burst + rate x elapsed over a long run, at fractional rates too', () => {
    const clock = new ManualClock(0)
    const keyed = table(clock, { rate: 3.7, burst: 4 })
    let admitted = 0
    for (let t = 0; t <= 60_000; t += 7) {
      clock.time = t
      admitted += takes(keyed, 'k', 3)
    }
    expect(admitted).toBeGreaterThanOrEqual(4 + Math.floor(3.7 * 60) - 1)
    expect(admitted).toBeLessThanOrEqual(4 + Math.ceil(3.7 * 60.007))
  })

  it('never throws on the hot path: a bad key or count is refused and counted', () => {
    const clock = new ManualClock(0)
    const keyed = table(clock)
    for (const [key, n] of [
      [42, 1],
      [undefined, 1],
      ['k', 0],
      ['k', -1],
      ['k', Number.NaN],
      ['k', Infinity],
      ['k', '1'],
    ] as const) {
      expect(keyed.tryAcquire(key as never, n as never)).toBe(false)
    }
    expect(keyed.tryAcquire('k', 99)).toBe(false) // over the burst: refused, not a bad argument
    expect(keyed.stats().invalidArguments).toBe(7)
    expect(() => keyed.retryAfterMs(5 as never)).toThrow(InvalidArgumentError)
    expect(() => keyed.retryAfterMs('k', 0)).toThrow(InvalidArgumentError)
    expect(() => keyed.available(5 as never)).toThrow(InvalidArgumentError)
  })

  it('validates its options, naming the field', () => {
    const clock = new ManualClock(0)
    expect(fieldOf(() => new KeyedLimiter({} as never))).toBe('rate')
    expect(fieldOf(() => new KeyedLimiter({ rate: 0 }))).toBe('rate')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, burst: -1 }))).toBe('burst')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, burst: 2 ** 30 }))).toBe('burst')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, maxKeys: 0 }))).toBe('maxKeys')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, maxKeys: 9_000_000 }))).toBe('maxKeys')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, maxKeys: 10, overflow: 11 }))).toBe('overflow')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, maxKeyLength: 0 }))).toBe('maxKeyLength')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, idleTimeout: 5 } as never))).toBe('idleTimeout')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1 } as never, {} as never))).toBe('options')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, shared: 'a b' }))).toBe('shared')
    expect(fieldOf(() => new KeyedLimiter({ rate: 1, now: 5 as never }))).toBe('now')
    expect(fieldOf(() => new KeyedLimiter(null as never))).toBe('factory')
    const keyed = table(clock)
    expect(fieldOf(() => keyed.configure({ rate: -1 }))).toBe('rate')
    expect(fieldOf(() => keyed.configure({ burst: 1e12 }))).toBe('burst')
    expect(fieldOf(() => keyed.configure({ maxKeys: 3 } as never))).toBe('maxKeys')
    expect(keyed.rate).toBe(10)
  })

  it('changes its rule live: a new rate and burst for every key, debts kept as time', () => {
    const clock = new ManualClock(0)
    const keyed = table(clock)
    const seen: number[] = []
    keyed.onRuleChange((rule) => seen.push(rule.version))
    expect(takes(keyed, 'a', 10)).toBe(5)
    const stats = keyed.configure({ rate: 100, burst: 20 })
    expect(stats.version).toBe(1)
    expect([keyed.rate, keyed.burst]).toEqual([100, 20])
    // a's debt was 500 ms of the old rate: it stays 500 ms, now worth 50 tokens of the new one.
    expect(keyed.tryAcquire('a')).toBe(false)
    clock.advance(500)
    expect(takes(keyed, 'a', 100)).toBe(20)
    expect(takes(keyed, 'fresh', 100)).toBe(20)
    expect(seen).toEqual([1])
    expect(keyed.stats().table?.rules.values).toEqual({ rate: 100, burst: 20 })
  })

  it('holds exactly floor(burst) permits in a full bucket, however far a live rule moves from the first', () => {
    const clock = new ManualClock(0)
    const keyed = table(clock, { rate: 7, burst: 3 })
    let n = 0
    for (const [rate, burst] of [
      [7, 3],
      [700, 3],
      [7000, 150],
      [0.7, 13.5],
      [30, 192],
      [1e6, 1],
    ]) {
      keyed.configure({ rate, burst })
      expect(takes(keyed, `fresh-${n++}`, 400)).toBe(Math.floor(burst))
    }
    // A burst's span 64 times the first one's is the most a table's ticks hold.
    expect(fieldOf(() => keyed.configure({ rate: 7, burst: 3 * 65 }))).toBe('burst')
  })

  it('lets two keys whose fingerprints collide share one budget, and no other', () => {
    const clock = new ManualClock(0)
    // Every key but "mallory" keeps its own fingerprint; "mallory" is given "alice"'s.
    const words = new Map<string, [number, number]>()
    const fingerprint = (key: string, out: Int32Array) => {
      const k = key === 'mallory' ? 'alice' : key
      let w = words.get(k)
      if (w === undefined) {
        w = [(words.size * 2654435761) | 0, (words.size * 40503 + 7) | 0]
        words.set(k, w)
      }
      out[0] = w[0]
      out[1] = w[1]
    }
    const keyed = table(clock, { fingerprint })
    expect(takes(keyed, 'alice', 3)).toBe(3)
    expect(takes(keyed, 'mallory', 10)).toBe(2) // alice's budget, shared
    expect(takes(keyed, 'bob', 10)).toBe(5)
    expect(keyed.stats().created).toBe(2)
  })

  it('bounds the key length: a longer key takes from the overflow limit, counted', () => {
    const clock = new ManualClock(0)
    const keyed = table(clock, { maxKeyLength: 16, maxKeys: 100, overflow: 2 })
    const long = 'x'.repeat(17)
    expect(takes(keyed, 'y'.repeat(16), 20)).toBe(5) // 16 units: a slot of its own
    // Every long key shares the overflow: 2 keys' worth, a burst of 10.
    expect(takes(keyed, long, 6) + takes(keyed, `${long}-other`, 6)).toBe(10)
    expect(keyed.has(long)).toBe(false)
    expect(keyed.stats().table).toMatchObject({ longKeys: 12, overflowAdmitted: 10, overflowRefused: 2 })
    expect(keyed.retryAfterMs(long)).toBeCloseTo(50, 3) // the overflow refills at 20 per second
    expect(keyed.available(long)).toBe(0)
    const huge = 'z'.repeat(1_000_000)
    expect(keyed.tryAcquire(huge)).toBe(false) // costs no hash: straight to the overflow
    expect(keyed.size).toBe(1)
  })

  it('reuses only slots at rest: a full table sends new keys to the overflow, exhausted keys stay refused', () => {
    const clock = new ManualClock(0)
    // maxKeys 4: one bucket of eight slots, whatever the keys' fingerprints.
    const keyed = table(clock, { maxKeys: 4, overflow: 1, burst: 2 })
    for (let k = 0; k < 8; k++) expect(takes(keyed, `busy-${k}`, 3)).toBe(2)
    // The table is full of keys refilling: a new key is not refused outright, it shares the overflow (burst 2).
    expect(takes(keyed, 'newcomer', 3)).toBe(2)
    expect(takes(keyed, 'another', 3)).toBe(0)
    expect(keyed.retryAfterMs('another')).toBeCloseTo(100, 3)
    // No amount of churn gives an exhausted key a fresh budget.
    for (let k = 0; k < 1000; k++) keyed.tryAcquire(`churn-${k}`)
    for (let k = 0; k < 8; k++) expect(keyed.tryAcquire(`busy-${k}`)).toBe(false)
    expect(keyed.stats().evicted).toBe(0)
    // Two burst spans later the returning keys are at rest and past their grace: new keys take their slots.
    clock.advance(800)
    expect(takes(keyed, 'late', 3)).toBe(2)
    expect(keyed.stats()).toMatchObject({ evicted: 1, size: 8 })
  })

  it('keeps the factory form working beside it', () => {
    const clock = new ManualClock(0)
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 2, now: clock.now }), { now: clock.now })
    expect(takes(keyed, 'a', 5)).toBe(2)
    expect(keyed.get('a')).toBeInstanceOf(TokenBucket)
    expect(keyed.available('a')).toBe(0)
    expect(keyed.available('nobody')).toBe(0)
    expect(keyed.stats().table).toBeUndefined()
    expect(() => keyed.configure({ rate: 1 })).toThrow(InvalidArgumentError)
    expect(() => keyed.heaviestKeys()).toThrow(InvalidArgumentError)
    keyed.close()
  })

  it('lists the keys refused most, sampled', () => {
    const clock = new ManualClock(0)
    const keyed = table(clock)
    takes(keyed, 'flooder', 805)
    takes(keyed, 'light', 85)
    const heavy = keyed.heaviestKeys()
    expect(heavy[0].key).toBe('flooder')
    expect(heavy[0].refused).toBeGreaterThan(600)
    expect(keyed.stats().table?.refused).toBe(800 + 80)
    const long = `${'q'.repeat(40)}`
    takes(keyed, long, 1000)
    expect(keyed.heaviestKeys().find((k) => k.key.startsWith('qqq'))).toMatchObject({ truncated: true })
  })

  it("serves as an inbound guard's rate limit, keyed by the client's address: 429 (Shed.rateLimit) past the burst", () => {
    type Req = { socket: { remoteAddress: string } }
    const access = {
      header: () => undefined,
      address: (req: Req) => req.socket.remoteAddress,
    } as unknown as ConstructorParameters<typeof InboundGuard<Req>>[1]
    const clock = new ManualClock(0)
    const keyed = table(clock, { rate: 1, burst: 2 })
    const guard = new InboundGuard<Req>({ limiter: false, rateLimit: { limiter: keyed } }, access)
    const from = (ip: string) => guard.tryAcquire({ socket: { remoteAddress: ip } })
    expect([from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.2')]).toEqual([0, 0, -3, 0])
    guard.close()
  })

  it('throws a typed error for bad options before taking any memory', () => {
    expect(() => new KeyedLimiter({ rate: 1, maxKeys: 1.5 })).toThrow(InvalidOptionError)
  })
})
