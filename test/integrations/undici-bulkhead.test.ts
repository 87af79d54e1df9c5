import * as http from 'http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { BulkheadPool, isBulkheadRejectedError } from '../../lib/index'
import { undiciGuard } from '../../lib/entries/undici'
import { serving, type TestServer } from './inbound-scenarios'
import { badOptionField } from './option-field'
import { undiciMajors } from './undici-majors'

// A saturated origin (2 requests at a time, 20 ms each: 100 req/s; it queues the rest, as a thread pool does) and
// a healthy one beside it (answers at once). Real sockets, real undici, real time.
const SLOTS = 2
const SERVICE_MS = 20
let slow: TestServer
let healthy: TestServer
const waiting: http.ServerResponse[] = []
let busy = 0
let mostHeld = 0 // the most requests the slow origin held at once (serving and queued)

function serveNext(): void {
  while (busy < SLOTS && waiting.length > 0) {
    const res = waiting.shift() as http.ServerResponse
    busy++
    setTimeout(() => {
      busy--
      res.end('ok')
      serveNext()
    }, SERVICE_MS)
  }
}

beforeAll(async () => {
  slow = await serving(
    http
      .createServer((_req, res) => {
        waiting.push(res)
        mostHeld = Math.max(mostHeld, busy + waiting.length)
        serveNext()
      })
      .listen(0, '127.0.0.1'),
  )
  healthy = await serving(http.createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1'))
})
afterAll(async () => {
  await slow.close()
  await healthy.close()
})

interface Outcome {
  ok: number
  rejected: number
  other: number
  /** Milliseconds from each call to its rejection. */
  rejections: number[]
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** Calls `url` at `rate` per second for `ms`, open loop (each call on time, whatever the others do). */
async function drive(send: () => Promise<unknown>, rate: number, ms: number): Promise<Outcome> {
  const outcome: Outcome = { ok: 0, rejected: 0, other: 0, rejections: [] }
  const calls: Promise<void>[] = []
  const start = performance.now()
  for (let i = 0; i < (rate * ms) / 1000; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 1) await new Promise((r) => setTimeout(r, wait))
    const sent = performance.now()
    calls.push(
      send().then(
        () => void outcome.ok++,
        (error: unknown) => {
          if (!isBulkheadRejectedError(error)) return void outcome.other++
          outcome.rejected++
          outcome.rejections.push(performance.now() - sent)
        },
      ),
    )
  }
  await Promise.all(calls)
  return outcome
}

for (const { major, undici } of undiciMajors) {
  describe(`undiciGuard's bulkheads (undici ${major})`, () => {
    it('hold a saturated origin to a bounded number of requests, fail the rest at once, and leave the healthy one alone', async () => {
      const guard = undiciGuard({ attempts: 1 })
      const dispatcher = new undici.Agent().compose(guard)
      const call = (server: TestServer) => async () => {
        const res = await undici.request(`http://127.0.0.1:${server.port}/`, { dispatcher })
        await res.body.text()
      }
      // In use at half its capacity first (the bulkhead learns its response time), then 5x what it serves, with the
      // healthy origin's traffic at the same time.
      await drive(call(slow), 50, 1000)
      mostHeld = 0
      const [toSlow, toHealthy] = await Promise.all([drive(call(slow), 500, 2000), drive(call(healthy), 50, 2000)])

      // The healthy origin answers at once; all of its calls go (a call or two may be refused when this process's
      // own event loop stalls for tens of ms on a busy machine: measured from here, that is latency too). The bounds
      // below leave room for a busy 2-core machine; unguarded, every call would wait seconds.
      expect(toHealthy.other).toBe(0)
      expect(toHealthy.ok).toBeGreaterThanOrEqual(95)
      expect(toSlow.other).toBe(0)
      expect(toSlow.rejected).toBeGreaterThan(400) // most of the excess (800)
      // Refused at once, not after waiting in the origin's queue (20 ms per 2 requests: seconds by the end).
      expect(median(toSlow.rejections)).toBeLessThan(50)
      // Unguarded, the slow origin would hold about 800 requests by the end; the bulkhead holds a few times its slots.
      expect(mostHeld).toBeLessThan(200)
      const bulkheads = guard.bulkheads as BulkheadPool
      const originOf = (server: TestServer) => `http://127.0.0.1:${server.port}`
      expect(bulkheads.get(originOf(slow))!.stats().latency.shedding).toBe(true)
      expect(bulkheads.get(originOf(healthy))!.stats()).toMatchObject({ shed: 0, latency: { shedding: false } })
      expect(bulkheads.get(originOf(slow))!.inFlight).toBe(0) // every slot given back
      guard.close()
      await dispatcher.close()
    }, 20_000)
  })
}

describe('undiciGuard bulkhead options', () => {
  it('takes a pool to share, options for its own, or false; a bad value names the field', () => {
    const pool = new BulkheadPool()
    expect(undiciGuard({ bulkheads: pool }).bulkheads).toBe(pool)
    expect(undiciGuard({ bulkheads: false }).bulkheads).toBeUndefined()
    const own = undiciGuard({ bulkheads: { maxKeys: 5 } })
    expect(own.bulkheads).toBeInstanceOf(BulkheadPool)
    own.close()
    pool.close()
    expect(badOptionField(undiciGuard, { bulkheads: 'yes' })).toBe('bulkheads')
  })
})
