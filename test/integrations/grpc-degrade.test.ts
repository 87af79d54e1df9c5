// grpcServerGuard's fallback statuses, timeout, handler failures and deadlines, with real grpc-js calls.
import * as grpc from '@grpc/grpc-js'
import { describe, expect, it, vi } from 'vitest'

import { BbrLimiter, KeyedLimiter, Switchboard, TokenBucket } from '../../lib/index'
import { callSignal, grpcServerGuard, GrpcStatus } from '../../lib/entries/grpc'
import { loopTurns } from '../helpers/loop-turns'
import { waitFor } from '../helpers/wait-for'
import { call, closeAfterEach, EchoClient, startEcho, type Unary } from './grpc-service'
import { broken } from './answer-safety-scenarios'
import { controlledLimiter } from './inbound-scenarios'

const opened = closeAfterEach()

async function open(interceptor: ReturnType<typeof grpcServerGuard>, echo: Unary) {
  const server = (opened.server = await startEcho({ echo }, { interceptors: [interceptor] }))
  return (opened.client = new EchoClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure()))
}

/** A call's status with its trailers. */
function statusOf(client: grpc.Client): Promise<grpc.StatusObject> {
  return new Promise((resolve) => {
    const unary = (client as any).echo({}, () => undefined)
    unary.on('status', resolve)
  })
}

describe('grpcServerGuard: fallback, timeout, failures, deadlines', () => {
  it('a fallback ends a shed call with its status and trailers; undefined or a throw give the plain ones', async () => {
    const c = controlledLimiter(2)
    let mode = 'answer'
    const fallback = vi.fn((_info: unknown, reason: string) => {
      if (mode === 'throw') throw new Error('broken')
      return mode === 'answer'
        ? { code: GrpcStatus.UNAVAILABLE, details: 'degraded', trailers: { 'x-degraded': reason } }
        : undefined
    })
    const client = await open(grpcServerGuard({ limiter: c.limiter, fallback }), (_req, done) => done(null, {}))
    c.hold(3)
    c.signal.load = 900
    const degraded = await statusOf(client)
    expect(degraded).toMatchObject({ code: GrpcStatus.UNAVAILABLE, details: 'degraded' })
    expect(degraded.metadata.get('x-degraded')).toEqual(['overload'])
    mode = 'undefined'
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    mode = 'throw'
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.RESOURCE_EXHAUSTED) // the plain refusal
    c.releaseHeld()
    c.limiter.close()
  })

  it("callSignal() aborts on the guard's timeout (TimeoutError) and when the client cancels (AbortError)", async () => {
    const signals: Array<AbortSignal | undefined> = []
    const client = await open(grpcServerGuard({ limiter: false, timeout: 100 }), (_req, done) => {
      const signal = callSignal()
      signals.push(signal)
      signal?.addEventListener('abort', () => done(null, {}), { once: true }) // stops its work, as told
    })
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.UNAVAILABLE)
    await waitFor(() => signals[0]?.aborted === true, { what: "the timed-out handler's signal to abort" })
    expect((signals[0]?.reason as DOMException).name).toBe('TimeoutError')

    const cancelled = (client as any).echo({}, () => undefined)
    await waitFor(() => signals.length === 2, { what: 'the second call to reach its handler' })
    expect(signals[1]?.aborted).toBe(false)
    cancelled.cancel()
    await waitFor(() => signals[1]?.aborted === true, { what: "the cancelled call's signal to abort" })
    expect((signals[1]?.reason as DOMException).name).toBe('AbortError')
    expect(callSignal()).toBeUndefined() // outside a call
  })

  it('a handler that does not answer within timeout gets the fallback; its late answer is dropped; one release', async () => {
    const c = controlledLimiter(20)
    const release = vi.spyOn(c.limiter, 'release')
    const pending: Array<grpc.sendUnaryData<any>> = []
    const interceptor = grpcServerGuard({
      limiter: c.limiter,
      timeout: 50,
      fallback: (_info, reason) => ({ code: GrpcStatus.UNAVAILABLE, details: `fallback: ${reason}` }),
    })
    const client = await open(interceptor, (_req, done) => void pending.push(done))
    const r = await call(client, 'echo', {})
    expect(r).toMatchObject({ code: GrpcStatus.UNAVAILABLE, details: 'fallback: timeout' })
    pending[0](null, { late: true }) // too late: dropped, no second release, no crash
    await loopTurns()
    expect(release).toHaveBeenCalledTimes(1)
    expect(release.mock.calls[0][1]).toBe(false)
    expect(c.limiter.stats()).toMatchObject({ inFlight: 0, invalidReleases: 0 })
    expect(interceptor.guard.stats()).toMatchObject({ timedOut: 1, fallbacks: 1 })
    c.limiter.close()
  })

  it('a failing handler (INTERNAL) gets the fallback; a fallback that throws gives the plain UNAVAILABLE', async () => {
    let broken = false
    const interceptor = grpcServerGuard({
      limiter: false,
      fallback: (_info, reason) => {
        if (broken) throw new Error('the fallback fails too')
        return { code: GrpcStatus.OK, details: reason }
      },
    })
    const client = await open(interceptor, (_req, done) => done({ code: GrpcStatus.INTERNAL, details: 'db down' }))
    const answered = await statusOf(client)
    expect(answered).toMatchObject({ code: GrpcStatus.OK, details: 'error' })
    broken = true
    expect(await call(client, 'echo', {})).toMatchObject({ code: GrpcStatus.UNAVAILABLE })
    expect(interceptor.guard.stats()).toMatchObject({ fallbacks: 1, fallbackErrors: 1 })
  })

  it('refuses at once a call whose deadline is shorter than the expected service time (grpc-timeout)', async () => {
    const c = controlledLimiter(20)
    let calls = 0
    const interceptor = grpcServerGuard({ limiter: c.limiter })
    const client = await open(interceptor, (_req, done) => (calls++, done(null, {})))
    // Five quick calls teach the limiter a service time; then one whose deadline is shorter is refused.
    for (let i = 0; i < 5; i++) expect((await call(client, 'echo', {}, { deadline: 5000 })).code).toBe(GrpcStatus.OK)
    c.clock.advance(1000) // the buckets complete: minRt is measured
    const expected = c.limiter.expectedServiceMs()
    vi.spyOn(c.limiter, 'expectedServiceMs').mockReturnValue(10_000) // as a service that takes 10 s
    const refused = await call(client, 'echo', {}, { deadline: 2000 })
    expect(refused).toMatchObject({ code: GrpcStatus.RESOURCE_EXHAUSTED, details: expect.stringMatching(/deadline/) })
    expect(calls).toBe(5)
    expect(interceptor.guard.stats().shedDeadline).toBe(1)
    expect(expected).toBeGreaterThan(0)
    vi.restoreAllMocks()
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK) // no deadline: nothing to refuse
    c.limiter.close()
  })

  it('deadline: false reads no deadline', async () => {
    const c = controlledLimiter(20)
    vi.spyOn(c.limiter, 'expectedServiceMs').mockReturnValue(10_000)
    const client = await open(grpcServerGuard({ limiter: c.limiter, deadline: false }), (_req, done) => done(null, {}))
    expect((await call(client, 'echo', {}, { deadline: 2000 })).code).toBe(GrpcStatus.OK)
    await waitFor(() => c.limiter.inFlight === 0, { what: 'release' })
    c.limiter.close()
  })

  // Before: grpc-js's Metadata.set threw from the refusal, from the timeout's timer and from sendStatus, and the
  // application's functions threw out of the interceptor (issue 32, item 3).
  const unwritable: Array<Record<string, string>> = [
    { 'x-note': 'caf\u00e9' },
    { 'Bad Key': 'x' },
    { 'x-data-bin': 'x' },
  ]

  it('trailers grpc-js cannot send, from a refusal, a timer or a failure, give the plain status, counted', async () => {
    const c = controlledLimiter(20)
    let next = 0
    let fail = false
    const fallback = () => ({ code: GrpcStatus.UNAVAILABLE, details: 'degraded', trailers: unwritable[next++ % 3] })
    const interceptor = grpcServerGuard({ limiter: c.limiter, timeout: 30, fallback })
    const client = await open(interceptor, (_req, done) => {
      if (fail) done({ code: GrpcStatus.INTERNAL, details: 'db down' })
      // else never answers: the timeout's timer answers
    })
    const plain = { code: GrpcStatus.UNAVAILABLE, details: 'unavailable (the fallback failed)' }
    for (let i = 0; i < 3; i++) expect(await call(client, 'echo', {})).toEqual(plain) // from the timeout's timer
    fail = true
    for (let i = 0; i < 3; i++) expect(await call(client, 'echo', {})).toEqual(plain) // from sendStatus
    c.hold(21)
    c.signal.load = 900
    for (let i = 0; i < 3; i++) expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    expect(interceptor.guard.stats()).toMatchObject({ fallbacks: 0, fallbackErrors: 9 })
    c.releaseHeld()
    c.limiter.close()
  })

  it('an application function that throws ends the call with INTERNAL, counted, the handler not run', async () => {
    const limiter = new BbrLimiter({ fairness: true, minInFlight: 20, signal: () => 0 })
    const board = new Switchboard()
    board.set('route:/elsewhere', 'shed')
    const interceptor = grpcServerGuard({
      limiter,
      priority: broken('priority', 'normal'),
      trustPriority: broken('trustPriority', false),
      rateLimit: {
        limiter: new KeyedLimiter(() => new TokenBucket({ rate: 1000, burst: 1000, now: () => 0 })),
        key: broken('rateLimit.key', 'client'),
      },
      keyConcurrency: { max: 5, key: broken('keyConcurrency.key', 'tenant') },
      fairness: { key: broken('fairness.key', 'tenant') },
      switches: board,
      route: broken('route', '/test.Echo/Echo'),
    })
    let calls = 0
    const client = await open(interceptor, (_req, done) => (calls++, done(null, {})))
    const names = ['priority', 'trustPriority', 'rateLimit.key', 'keyConcurrency.key', 'fairness.key', 'route']
    for (const name of names) {
      const r = await call(client, 'echo', {}, { metadata: { 'x-break': name, 'x-priority': 'critical' } })
      expect({ name, ...r }).toEqual({ name, code: GrpcStatus.INTERNAL, details: 'internal error' })
    }
    expect(calls).toBe(0)
    expect(interceptor.guard.stats()).toMatchObject({ callbackErrors: names.length, keyConcurrency: { inFlight: 0 } })
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK)
    await waitFor(() => limiter.inFlight === 0, { what: 'the call to be released' })
    limiter.close()
    board.close()
  })
})
