import { describe, expect, it } from 'vitest'

import { BbrLimiter, InvalidOptionError, Shed } from '../../lib/index'
import { InboundGuard } from '../../lib/guards/inbound/inbound-guard'
import { ManualClock } from '../helpers/manual-clock'

/**
 * A limiter in front of a service that works on LIMIT requests at once at full speed, SERVICE ms each, and shares
 * itself among more (processor sharing: capacity LIMIT / SERVICE per ms whatever is in flight), the load pinned
 * over the threshold. One noisy tenant offers 3.5x the capacity, 20 light tenants 0.5x together (each 1/40 of it,
 * under its fair share of 1/21). Returns what each side asked and completed after the first second.
 */
function noisyNeighbour(fairness: boolean, seconds = 3) {
  const SERVICE = 10
  const LIMIT = 20
  const clock = new ManualClock()
  const limiter = new BbrLimiter({
    now: clock.now,
    signal: () => 900,
    minInFlight: 4,
    cooldown: 0,
    queueDelay: false,
    latency: false,
    fairness,
  })
  const working: Array<{ token: number; work: number; side: 'noisy' | 'light'; counted: boolean }> = []
  const tally = { noisy: { asked: 0, got: 0 }, light: { asked: 0, got: 0 } }
  const capacityPerMs = LIMIT / SERVICE
  for (let ms = 0; ms < seconds * 1000; ms++) {
    clock.time = ms
    const speed = Math.min(1, LIMIT / Math.max(1, working.length))
    for (let i = working.length - 1; i >= 0; i--) {
      const r = working[i]
      r.work -= speed
      if (r.work > 1e-9) continue
      working.splice(i, 1)
      limiter.release(r.token)
      if (r.counted) tally[r.side].got++
    }
    const counted = ms >= 1000
    const offer = (key: string, side: 'noisy' | 'light') => {
      const token = limiter.tryAcquire('normal', key)
      if (counted) tally[side].asked++
      if (token < 0) return expect(token).toBe(Shed.inFlight)
      working.push({ token, work: SERVICE, side, counted })
    }
    for (let i = 0; i < 3.5 * capacityPerMs; i++) offer('noisy', 'noisy')
    offer(`tenant-${ms % 20}`, 'light') // each light tenant once every 20 ms: 0.5x capacity together
  }
  // What was asked from the second second on, against what the service can complete in the same time.
  const capacity = capacityPerMs * (seconds - 1) * 1000
  return { limiter, tally, capacity }
}

describe('BbrLimiter fairness: heavy keys are shed first', () => {
  it('keeps the light tenants whole and gives the noisy one the rest, at the same total', () => {
    const fair = noisyNeighbour(true)
    const blind = noisyNeighbour(false)
    const total = (r: typeof fair) => r.tally.noisy.got + r.tally.light.got
    expect(fair.tally.light.got / fair.tally.light.asked).toBeGreaterThanOrEqual(0.95)
    expect(total(fair) / fair.capacity).toBeGreaterThanOrEqual(0.9)
    expect(fair.tally.noisy.got).toBeGreaterThan(0.3 * fair.capacity) // the rest goes to the noisy tenant
    // Without fairness the light tenants get what their share of the offered load wins: about 1/8 each time.
    expect(blind.tally.light.got / blind.tally.light.asked).toBeLessThan(0.5)
    expect(fair.limiter.stats().fairness?.heavyKeys).toEqual(['noisy'])
    expect(blind.limiter.stats().fairness).toBeUndefined()
  })

  it('sheds as before when no key is heavy (many keys of equal weight), and when requests carry no key', () => {
    const clock = new ManualClock()
    const options = { now: clock.now, signal: () => 900, minInFlight: 4, cooldown: 0, queueDelay: false } as const
    const limiter = new BbrLimiter({ ...options, latency: false, fairness: true })
    let shed = 0
    for (let ms = 0; ms < 500; ms++) {
      clock.time = ms
      for (let i = 0; i < 8; i++) {
        const token = limiter.tryAcquire('normal', `key-${i}`)
        if (token < 0) shed++
        else limiter.release(token)
      }
    }
    expect(limiter.stats().fairness).toEqual({ heavyKeys: [], favoured: 0 })
    const held = Array.from({ length: 6 }, () => limiter.tryAcquire('normal', 'key-0'))
    expect(held.slice(0, 5).every((t) => t >= 0)).toBe(true)
    expect(held[5]).toBe(Shed.inFlight) // equal keys: nobody is favoured, the limit (over 4 in flight) holds
    expect(limiter.tryAcquire()).toBe(Shed.inFlight)
    expect(shed).toBe(0)
  })

  it('bounds what light keys may take: never past 1.5x the limit, however many keys are minted', () => {
    const clock = new ManualClock()
    const limiter = new BbrLimiter({
      now: clock.now,
      signal: () => 900,
      minInFlight: 10,
      cooldown: 0,
      queueDelay: false,
      latency: false,
      fairness: { step: 1 },
    })
    // A heavy key on record (beside two light ones), then requests of fresh keys that never finish.
    for (let i = 0; i < 50; i++) limiter.release(limiter.tryAcquire('normal', 'heavy'))
    for (const key of ['light-a', 'light-b']) limiter.release(limiter.tryAcquire('normal', key))
    clock.time = 10
    let admitted = 0
    for (let i = 0; i < 1000; i++) if (limiter.tryAcquire('normal', `fresh-${i}`) >= 0) admitted++
    expect(limiter.stats().fairness?.heavyKeys).toEqual(['heavy'])
    expect(admitted).toBe(16) // in flight 15 (1.5 x 10) is the last count a request may join
  })

  it('under the queueing-delay rule: light keys pass until the heavy ones are cut to 5 %, then they are shed too', () => {
    const clock = new ManualClock()
    const limiter = new BbrLimiter({
      now: clock.now,
      signal: { load: () => 900, delay: () => 80 }, // a standing queue 8x the target
      minInFlight: 1e6, // the in-flight rule never binds here
      latency: false,
      fairness: { step: 25 },
    })
    const seen = { heavy: 0, heavyShed: 0, light: 0, lightShed: 0 }
    const offer = (key: string, side: 'heavy' | 'light') => {
      const token = limiter.tryAcquire('normal', key)
      seen[side]++
      if (token < 0) seen[`${side}Shed`]++
      else limiter.release(token)
    }
    let lightShedWhileFractionHigh = 0
    for (let ms = 0; ms < 3000; ms++) {
      clock.time = ms
      const before = seen.lightShed
      for (let i = 0; i < 7; i++) offer('heavy', 'heavy')
      offer(`light-${ms % 20}`, 'light')
      if (seen.lightShed > before && limiter.stats().admitFraction >= 0.05) lightShedWhileFractionHigh++
    }
    expect(seen.heavyShed / seen.heavy).toBeGreaterThan(0.5)
    expect(lightShedWhileFractionHigh).toBe(0)
    // The delay never falls (the injected signal stays at 80 ms): the fraction reaches its floor and light keys
    // are shed then, as the queue they are.
    expect(limiter.stats().admitFraction).toBeLessThan(0.05)
    expect(seen.lightShed).toBeGreaterThan(0)
  })

  it('refuses a bad fairness option, naming the field', () => {
    expect(() => new BbrLimiter({ fairness: { k: 1 } })).toThrow(InvalidOptionError)
    expect(() => new BbrLimiter({ fairness: { step: 0 } })).toThrow(/`fairness.step`/)
    expect(() => new BbrLimiter({ fairness: 'yes' as never })).toThrow(/`fairness`/)
    expect(() => new BbrLimiter({ fairness: true, shared: 'x'.repeat(112) })).toThrow(/`shared`/)
  })
})

describe('inbound guards: fairness: { key }', () => {
  type Req = { headers: Record<string, string> }
  const access = {
    header: (r: Req, name: string) => r.headers[name],
    remaining: undefined,
  } as unknown as ConstructorParameters<typeof InboundGuard<Req>>[1]
  const tenant = (name: string): Req => ({ headers: { 'x-tenant': name } })

  it('passes the key to a limiter it makes with fairness on, and the light tenant gets through', () => {
    const clock = new ManualClock()
    const limiter = { now: clock.now, signal: () => 900, minInFlight: 4, cooldown: 0, queueDelay: false } as const
    const guard = new InboundGuard<Req>(
      { limiter: { ...limiter, latency: false }, fairness: { key: (r) => r.headers['x-tenant'] } },
      access,
    )
    expect(guard.limiter?.fair).toBe(true)
    for (let i = 0; i < 50; i++) guard.release(guard.tryAcquire(tenant('noisy')))
    for (const name of ['a', 'b']) guard.release(guard.tryAcquire(tenant(name)))
    clock.advance(200) // the next step sees who was admitted
    const noisy = Array.from({ length: 10 }, () => guard.tryAcquire(tenant('noisy')))
    expect(noisy.filter((t) => t < 0).length).toBeGreaterThan(0) // the noisy tenant hit the limit
    expect(guard.tryAcquire(tenant('a'))).toBeGreaterThanOrEqual(0) // the light one still passes
    guard.close()
  })

  it('refuses fairness without a key function, or with a limiter that cannot use it', () => {
    expect(() => new InboundGuard<Req>({ fairness: {} as never }, access)).toThrow(/`fairness.key`/)
    expect(() => new InboundGuard<Req>({ limiter: false, fairness: { key: () => 'k' } }, access)).toThrow(/`limiter`/)
    const blind = new BbrLimiter()
    expect(() => new InboundGuard<Req>({ limiter: blind, fairness: { key: () => 'k' } }, access)).toThrow(
      /made with `fairness`/,
    )
    blind.close()
  })
})
