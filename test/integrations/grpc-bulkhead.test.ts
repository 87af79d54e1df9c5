import * as grpc from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'

import { grpcClientGuard, GrpcStatus } from '../../lib/entries/grpc'
import { badOptionField } from './option-field'
import { call, closeAfterEach, EchoClient, startEcho } from './grpc-service'

const opened = closeAfterEach()

/** A server that handles 2 calls at a time, 20 ms each (100 calls/s), and queues the rest. */
async function saturating() {
  const state = { busy: 0, waiting: [] as Array<() => void>, mostHeld: 0, reached: 0 }
  const next = () => {
    while (state.busy < 2 && state.waiting.length > 0) {
      const finish = state.waiting.shift() as () => void
      state.busy++
      setTimeout(() => {
        state.busy--
        finish()
        next()
      }, 20)
    }
  }
  opened.server = await startEcho({
    echo: (req, done) => {
      state.reached++
      state.waiting.push(() => done(null, req.request))
      state.mostHeld = Math.max(state.mostHeld, state.busy + state.waiting.length)
      next()
    },
  })
  return state
}

/** `rate` calls per second for `ms`, open loop; resolves with every call's result. */
async function drive(client: grpc.Client, rate: number, ms: number) {
  const calls: Promise<{ code: number; details?: string; ms: number }>[] = []
  const start = performance.now()
  for (let i = 0; i < (rate * ms) / 1000; i++) {
    const wait = start + (i * 1000) / rate - performance.now()
    if (wait > 1) await new Promise((r) => setTimeout(r, wait))
    const sent = performance.now()
    calls.push(call(client, 'echo', { i }).then((r) => ({ ...r, ms: performance.now() - sent })))
  }
  return Promise.all(calls)
}

describe('grpcClientGuard bulkhead (one per target)', () => {
  it('holds a saturated target to a bounded number of calls and ends the rest at once with UNAVAILABLE', async () => {
    const server = await saturating()
    const guard = grpcClientGuard({ target: 'echo-service' })
    const client = (opened.client = new EchoClient(
      `127.0.0.1:${opened.server!.port}`,
      grpc.credentials.createInsecure(),
      {
        interceptors: [guard],
      },
    ))
    await drive(client, 50, 1000) // in use at half its capacity first: the bulkhead learns its response time
    server.mostHeld = 0
    const results = await drive(client, 500, 2000) // then 5x what it serves
    const rejected = results.filter((r) => r.code === GrpcStatus.UNAVAILABLE && /bulkhead/.test(r.details ?? ''))
    expect(results.filter((r) => r.code !== 0 && !rejected.includes(r))).toEqual([])
    expect(rejected.length).toBeGreaterThan(400)
    const times = rejected.map((r) => r.ms).sort((a, b) => a - b)
    expect(times[Math.floor(times.length / 2)]).toBeLessThan(50) // refused at once, not after the target's queue
    expect(rejected[0].details).toMatch(/echo-service.*rejected locally/)
    expect(server.mostHeld).toBeLessThan(200) // unguarded, about 800 by the end
    const bulkhead = guard.bulkheads!.get('echo-service')!
    expect(bulkhead.stats().latency.shedding).toBe(true)
    expect(bulkhead.inFlight).toBe(0)
    guard.close()
  }, 20_000)

  it('takes false for none; a bad value names the field', () => {
    expect(grpcClientGuard({ bulkheads: false }).bulkheads).toBeUndefined()
    expect(badOptionField(grpcClientGuard, { bulkheads: 7 })).toBe('bulkheads')
  })
})
