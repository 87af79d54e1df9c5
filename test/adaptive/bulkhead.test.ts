import { describe, expect, it } from 'vitest'

import {
  AdaptiveBulkhead,
  BulkheadPool,
  BulkheadRejectedError,
  isBulkheadRejectedError,
  Priority,
  Shed,
} from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { fieldOf } from '../helpers/typed-errors'
import { uniqueName } from '../helpers/unique-name'
import '../helpers/cleanup-regions'
import { simulateUpstream, type UpstreamPhase } from './upstream-sim'

const phase = (load: number, seconds: number, extra: Partial<UpstreamPhase> = {}): UpstreamPhase => ({
  rate: load * 400,
  seconds,
  concurrency: 8,
  serviceMs: 20,
  ...extra,
})

function bulkhead(extra = {}) {
  const clock = new ManualClock(1000)
  return { clock, bulkhead: new AdaptiveBulkhead({ now: clock.now, ...extra }) }
}

describe('AdaptiveBulkhead', () => {
  it('admits everything while the upstream keeps up, and bounds it once the upstream queues', () => {
    const { clock, bulkhead: b } = bulkhead()
    const [calm, saturated] = simulateUpstream(b, clock, [phase(0.8, 5), phase(3, 10)])
    expect(calm.shed).toBe(0)
    const steady = saturated.perSecond.slice(2)
    for (const s of steady) expect(s.maxInFlight).toBeLessThanOrEqual(24) // 8 slots, a short queue
    for (const s of steady) expect(s.completed).toBeGreaterThanOrEqual(360)
    expect(b.stats()).toMatchObject({ shed: saturated.shed, latency: { shedding: true } })
    expect(b.stats().admitted).toBe(calm.admitted + saturated.admitted)
  })

  it('bounds the calls in flight to an upstream that stops answering', () => {
    const { clock, bulkhead: b } = bulkhead()
    const [, hung] = simulateUpstream(b, clock, [phase(0.5, 3), phase(0.5, 5, { serviceMs: 1e9 })])
    const held = hung.perSecond.map((s) => s.maxInFlight)
    expect(held[0]).toBeLessThan(100)
    expect(new Set(held.slice(1)).size).toBe(1)
  })

  it('keeps the time of calls released unmeasured out of what it learns', async () => {
    const { clock, bulkhead: b } = bulkhead()
    for (let i = 0; i < 200; i++) {
      const token = b.tryAcquire()
      clock.advance(5)
      b.release(token, false) // say, a refused connection after 5 ms
    }
    expect(b.inFlight).toBe(0)
    expect(b.stats().latency.baseRt).toBe(0) // nothing learned from them
    const token = b.tryAcquire()
    clock.advance(20)
    b.release(token)
    b.release(token) // twice: ignored and counted
    expect(b.stats().invalidReleases).toBe(1)
    await expect(b.execute(() => 42)).resolves.toBe(42)
    await expect(b.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down')
    expect(b.inFlight).toBe(0)
  })

  it('execute rejects at once with a typed error when the upstream is saturated', async () => {
    const { clock, bulkhead: b } = bulkhead()
    simulateUpstream(b, clock, [phase(3, 3)])
    const held: number[] = []
    for (let token = b.tryAcquire(); token >= 0; token = b.tryAcquire()) held.push(token)
    expect(b.tryAcquire()).toBe(Shed.latency)
    const error = await b.execute(() => 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BulkheadRejectedError)
    expect(isBulkheadRejectedError(error)).toBe(true)
    expect(isBulkheadRejectedError({ code: 'ERR_BULWARK_BULKHEAD_REJECTED' })).toBe(false) // not bulwark's
    expect(isBulkheadRejectedError(new Error('x'))).toBe(false)
    expect(error).toMatchObject({ code: 'ERR_BULWARK_BULKHEAD_REJECTED', reason: 'latency' })
    expect(b.tryAcquire(Priority.critical)).toBeGreaterThanOrEqual(0) // critical keeps headroom over the limit
    for (const t of held) b.release(t)
  })

  it('shares one limit across members of a shared name', () => {
    const clock = new ManualClock(1000)
    const name = uniqueName('bulkhead-pair')
    const a = new AdaptiveBulkhead({ now: clock.now, shared: name })
    const b = new AdaptiveBulkhead({ now: clock.now, shared: name })
    const token = a.tryAcquire()
    expect(b.inFlight).toBe(1)
    a.release(token)
    simulateUpstream(a, clock, [phase(3, 3)])
    expect(b.stats().latency).toEqual(a.stats().latency)
    expect(b.stats().shed).toBe(a.stats().shed)
    a.close()
    b.close()
  })

  it('validates its options, naming the field', () => {
    expect(fieldOf(() => new AdaptiveBulkhead({ window: 1000, buckets: 3 }))).toBe('window')
    expect(fieldOf(() => new AdaptiveBulkhead({ latency: { buffer: -1 } }))).toBe('latency.buffer')
    expect(fieldOf(() => new AdaptiveBulkhead({ priorities: { urgent: 2 } as never }))).toBe('priorities.urgent')
    expect(fieldOf(() => new AdaptiveBulkhead({ shared: 'a/b' }))).toBe('shared')
  })
})

describe('BulkheadPool', () => {
  it('makes one bulkhead per upstream and keeps them apart', () => {
    const clock = new ManualClock(1000)
    const pool = new BulkheadPool({ now: clock.now })
    const slow = pool.get('http://slow:1') as AdaptiveBulkhead
    simulateUpstream(slow, clock, [phase(3, 3)])
    expect(slow.stats().latency.shedding).toBe(true)
    const other = pool.get('http://other:2') as AdaptiveBulkhead
    expect(other).not.toBe(slow)
    expect(other.tryAcquire()).toBeGreaterThanOrEqual(0)
    expect(pool.get('http://slow:1')).toBe(slow)
    pool.close()
  })

  it('holds at most maxKeys upstreams at rest, dropping the least recently used, never one with calls in flight', () => {
    const clock = new ManualClock(1000)
    const pool = new BulkheadPool({ now: clock.now, maxKeys: 3 })
    const busy = pool.get('a') as AdaptiveBulkhead
    const token = busy.tryAcquire()
    for (const key of ['b', 'c', 'd', 'e']) {
      clock.advance(1)
      pool.get(key)
    }
    expect(pool.has('a')).toBe(true) // in flight: kept
    expect(pool.has('b')).toBe(false)
    expect(pool.size).toBe(3)
    busy.release(token)
    clock.advance(1)
    pool.get('f')
    expect(pool.has('a')).toBe(false) // at rest now, and the least recently used
    expect(pool.size).toBe(3)
    pool.close()
  })

  it('drops upstreams idle for idleTimeout when a new one comes', () => {
    const clock = new ManualClock(1000)
    const pool = new BulkheadPool({ now: clock.now, idleTimeout: 500 })
    pool.get('a')
    clock.advance(600)
    pool.get('b')
    expect(pool.has('a')).toBe(false)
    expect(pool.size).toBe(1)
    pool.close()
  })

  it('validates its options, naming the field', () => {
    expect(fieldOf(() => new BulkheadPool({ maxKeys: 0 }))).toBe('maxKeys')
    expect(fieldOf(() => new BulkheadPool({ bulkhead: { latency: { minLimit: -1 } } }))).toBe('latency.minLimit')
    expect(fieldOf(() => new BulkheadPool({ shared: 'x'.repeat(65) }))).toBe('shared')
  })
})
