import * as grpc from '@grpc/grpc-js'
import { describe, expect, it, vi } from 'vitest'

import { KeyConcurrencyLimiter, KeyedLimiter, TokenBucket } from '../../lib/index'
import { grpcServerGuard, type GrpcServerGuardOptions, GrpcStatus } from '../../lib/entries/grpc'
import { loopTurns } from '../helpers/loop-turns'
import { waitFor } from '../helpers/wait-for'
import { call, closeAfterEach, EchoClient, startEcho, type Unary } from './grpc-service'
import { controlledLimiter, priorityScenarios } from './inbound-scenarios'
import { fullLimiter } from './queue-scenarios'

const opened = closeAfterEach()

async function open(interceptor: ReturnType<typeof grpcServerGuard>, echo: Unary) {
  const server = (opened.server = await startEcho({ echo }, { interceptors: [interceptor] }))
  return (opened.client = new EchoClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure()))
}

describe('grpcServerGuard (grpc-js server interceptor)', () => {
  it('admits calls and releases each token once; sheds with RESOURCE_EXHAUSTED without running the handler', async () => {
    const c = controlledLimiter(2)
    let calls = 0
    const client = await open(grpcServerGuard({ limiter: c.limiter }), (req, done) => {
      calls++
      done(null, { echo: req.request.text })
    })
    expect(await call(client, 'echo', { text: 'hi' })).toEqual({ code: 0, value: { echo: 'hi' } })
    await waitFor(() => c.limiter.inFlight === 0, { what: 'release' })
    c.hold(3)
    c.signal.load = 900
    const shed = await call(client, 'echo', { text: 'hi' })
    expect(shed.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    expect(shed.details).toMatch(/overloaded/)
    expect(calls).toBe(1)
    c.releaseHeld()
    const s = c.limiter.stats()
    expect(s.inFlight).toBe(0)
    expect(s.invalidReleases).toBe(0)
    c.limiter.close()
  })

  it('shadow mode: a limiter that would shed admits the call, counted apart; off, it sheds', async () => {
    const c = controlledLimiter(2)
    let calls = 0
    const client = await open(grpcServerGuard({ limiter: c.limiter }), (req, done) => {
      calls++
      done(null, { echo: req.request.text })
    })
    c.limiter.configure({ shadow: true })
    c.hold(3)
    c.signal.load = 900
    expect(await call(client, 'echo', { text: 'hi' })).toEqual({ code: 0, value: { echo: 'hi' } })
    expect(calls).toBe(1)
    const shadow = c.limiter.stats().rules.shadow
    expect(shadow?.wouldRefuse.reduce((sum, n) => sum + n.count, 0)).toBe(1)
    c.limiter.configure({ shadow: false })
    expect((await call(client, 'echo', { text: 'hi' })).code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    c.releaseHeld()
    c.limiter.close()
  })

  it('sends grpc-retry-pushback-ms with the shed status', async () => {
    const c = controlledLimiter(1)
    const client = await open(grpcServerGuard({ limiter: c.limiter, retryAfter: 3 }), (_req, done) => done(null, {}))
    c.hold(2)
    c.signal.load = 900
    const trailers = await new Promise<grpc.Metadata>((resolve) => {
      const unary = (client as any).echo({}, (error: grpc.ServiceError | null) =>
        expect(error?.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED),
      )
      unary.on('status', (status: grpc.StatusObject) => resolve(status.metadata))
    })
    expect(trailers.get('grpc-retry-pushback-ms')).toEqual(['3000'])
    c.releaseHeld()
    c.limiter.close()
  })

  describe("who chooses a call's priority (the adapters' shared scenarios, over metadata)", () => {
    priorityScenarios(async (guard) => {
      const client = await open(grpcServerGuard(guard as GrpcServerGuardOptions), (_req, done) => done(null, {}))
      return async (metadata) => (await call(client, 'echo', {}, { metadata })).code === GrpcStatus.OK
    })
  })

  it('rate-limits per key of the call (method, metadata, address)', async () => {
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now: () => 0 }))
    const keys: string[] = []
    const key = (info: { method: string; address: string | undefined }) => {
      keys.push(`${info.method} ${info.address}`)
      return info.method
    }
    const client = await open(
      grpcServerGuard({ limiter: false, rateLimit: { limiter: perClient, key } }),
      (_req, done) => done(null, {}),
    )
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK)
    const limited = await call(client, 'echo', {})
    expect(limited.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    expect(limited.details).toMatch(/rate limited/)
    expect((await call(client, 'other', {})).code).toBe(GrpcStatus.OK)
    expect(keys[0]).toBe('/test.Echo/Echo 127.0.0.1')
  })

  it('releases the token when the client cancels or the deadline passes mid-handler', async () => {
    const c = controlledLimiter(50)
    const pending: Array<grpc.sendUnaryData<any>> = []
    const client = await open(grpcServerGuard({ limiter: c.limiter }), (_req, done) => {
      pending.push(done)
    })
    const cancelled = Array.from({ length: 3 }, () => (client as any).echo({}, () => undefined) as grpc.ClientUnaryCall)
    const timedOut = Array.from({ length: 3 }, () => call(client, 'echo', {}, { deadline: 100 }))
    await waitFor(() => pending.length === 6, { what: 'every call to reach the handler' })
    expect(c.limiter.inFlight).toBe(6)
    cancelled.forEach((u) => u.cancel())
    expect((await Promise.all(timedOut)).map((r) => r.code)).toEqual(Array(3).fill(GrpcStatus.DEADLINE_EXCEEDED))
    await waitFor(() => c.limiter.inFlight === 0, { what: 'cancelled and expired calls to give their tokens back' })
    pending.forEach((done) => done(null, {})) // late answers: no second release
    await loopTurns()
    const s = c.limiter.stats()
    expect(s.invalidReleases).toBe(0)
    expect(s.admitted).toBe(6)
    c.limiter.close()
  })

  describe('with maxWait (docs/rules/queue.md)', () => {
    const echo: Unary = (req, done) => {
      handled++
      done(null, { echo: req.request.text })
    }
    let handled = 0
    const queued = (limiter: { stats(): { queue?: { length: number } } }) =>
      waitFor(() => limiter.stats().queue?.length === 1, { what: 'the call to wait in the queue' })

    it('queues a refused call and admits it when a slot is freed, released exactly once', async () => {
      handled = 0
      const { limiter, releaseHeld } = fullLimiter(60_000)
      const release = vi.spyOn(limiter, 'release')
      const client = await open(grpcServerGuard({ limiter }), echo)
      const reply = call(client, 'echo', { text: 'later' })
      await queued(limiter)
      expect(handled).toBe(0)
      releaseHeld()
      expect(await reply).toEqual({ code: 0, value: { echo: 'later' } })
      await waitFor(() => limiter.inFlight === 0, { what: 'release' })
      expect(limiter.stats()).toMatchObject({ shed: 0, invalidReleases: 0, queue: { admitted: 1 } })
      expect(release).toHaveBeenCalledTimes(4)
      limiter.close()
    })

    it('ends a call that waited maxWait with RESOURCE_EXHAUSTED, its handler never run', async () => {
      handled = 0
      const { limiter, clock, releaseHeld } = fullLimiter(50)
      const client = await open(grpcServerGuard({ limiter }), echo)
      const reply = call(client, 'echo', {})
      await queued(limiter)
      clock.advance(50)
      const r = await reply
      expect(r.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
      expect(r.details).toMatch(/no slot within maxWait/)
      expect(handled).toBe(0)
      expect(limiter.stats().queue).toMatchObject({ timedOut: 1 })
      releaseHeld()
      limiter.close()
    })

    it('frees the place of a call cancelled while it waits', async () => {
      handled = 0
      const { limiter, releaseHeld } = fullLimiter(60_000)
      const client = await open(grpcServerGuard({ limiter }), echo)
      const unary = (client as any).echo({}, () => undefined) as grpc.ClientUnaryCall
      await queued(limiter)
      unary.cancel()
      await waitFor(() => limiter.stats().queue?.abandoned === 1, { what: 'the waiter to be abandoned' })
      releaseHeld()
      await loopTurns() // the queue retries its waiters in a microtask after a release: a kept waiter is admitted then
      expect(handled).toBe(0)
      expect(limiter.stats()).toMatchObject({ inFlight: 0, invalidReleases: 0, queue: { admitted: 0, length: 0 } })
      limiter.close()
    })
  })

  it('releases when the handler fails', async () => {
    const c = controlledLimiter(5)
    const client = await open(grpcServerGuard({ limiter: c.limiter }), (_req, done) =>
      done({ code: GrpcStatus.NOT_FOUND, details: 'no' }),
    )
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.NOT_FOUND)
    await waitFor(() => c.limiter.inFlight === 0, { what: 'release' })
    expect(c.limiter.stats().invalidReleases).toBe(0)
    c.limiter.close()
  })

  it('per-key concurrency: a key with its calls in flight gets RESOURCE_EXHAUSTED; cancelled, expired, failed calls give slots back once', async () => {
    const keys = new KeyConcurrencyLimiter({ max: 2 })
    const pending: Array<grpc.sendUnaryData<any>> = []
    const key = (info: { metadata: { get(key: string): unknown[] } }) => String(info.metadata.get('x-tenant')[0])
    const client = await open(
      grpcServerGuard({ limiter: false, keyConcurrency: { limiter: keys, key } }),
      (_req, done) => {
        pending.push(done)
      },
    )
    const tenant = { metadata: { 'x-tenant': 'acme' } }
    const cancelled = (client as any).echo({}, makeMetadata('acme'), () => undefined) as grpc.ClientUnaryCall
    const expiring = call(client, 'echo', {}, { ...tenant, deadline: 150 })
    await waitFor(() => pending.length === 2, { what: 'two calls to reach the handler' })
    const refused = await call(client, 'echo', {}, tenant)
    expect(refused.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    expect(refused.details).toMatch(/too many concurrent calls/)
    const other = call(client, 'echo', {}, { metadata: { 'x-tenant': 'other' } })
    await waitFor(() => pending.length === 3, { what: "another tenant's call to reach the handler" })
    cancelled.cancel()
    expect((await expiring).code).toBe(GrpcStatus.DEADLINE_EXCEEDED)
    await waitFor(() => keys.inFlight('acme') === 0, {
      what: 'the cancelled and expired calls to give their slots back',
    })
    pending.forEach((done) => done(null, {})) // late answers: no second release
    expect((await other).code).toBe(GrpcStatus.OK)
    await loopTurns()
    expect(keys.stats()).toMatchObject({ inFlight: 0, invalidReleases: 0, admitted: 3, shed: 1 })
    keys.close()
  })
})

function makeMetadata(tenant: string): grpc.Metadata {
  const metadata = new grpc.Metadata()
  metadata.set('x-tenant', tenant)
  return metadata
}
