import * as grpc from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'

import { BreakerGroup, CircuitBreaker, type SreBreaker } from '../../lib/index'
import { grpcClientGuard, GrpcStatus } from '../../lib/entries/grpc'
import { badOptionField } from './option-field'
import { call, closeAfterEach, EchoClient, startEcho } from './grpc-service'

const opened = closeAfterEach()

/** A server whose every call fails with `code`; counts the calls that reach it, by method. */
async function failingWith(code: number) {
  const reached = { echo: 0, other: 0 }
  opened.server = await startEcho({
    echo: (_req, done) => {
      reached.echo++
      done({ code, details: 'server says no' })
    },
    other: (_req, done) => {
      reached.other++
      done({ code, details: 'server says no' })
    },
  })
  return reached
}

function connect(interceptor: ReturnType<typeof grpcClientGuard>) {
  return (opened.client = new EchoClient(`127.0.0.1:${opened.server!.port}`, grpc.credentials.createInsecure(), {
    interceptors: [interceptor],
  }))
}

// request 10, random 0: once 10 calls are in the window and none succeeded, every call is rejected.
const strict = { minimumCalls: 10, random: () => 0 }

describe('grpcClientGuard (grpc-js client interceptor)', () => {
  it("shadow mode: an open method's breaker lets calls reach the server, counted as would-be refusals", async () => {
    const reached = await failingWith(GrpcStatus.UNAVAILABLE)
    const guard = grpcClientGuard({ breaker: strict })
    const c = connect(guard)
    for (let i = 0; i < 10; i++) await call(c, 'echo', {})
    const breaker = guard.breakers.get('/test.Echo/Echo') as SreBreaker
    breaker.configure({ shadow: true })
    expect((await call(c, 'echo', {})).details).toBe('server says no')
    expect(reached.echo).toBe(11)
    expect(breaker.stats().rules.shadow?.wouldRefuse).toContainEqual({ reason: 'open', count: 1 })
    breaker.configure({ shadow: false })
    expect((await call(c, 'echo', {})).details).toMatch(/open \(rejected locally\)/)
    guard.close()
  })

  it('opens the method’s breaker on a failing server and rejects locally with UNAVAILABLE', async () => {
    const reached = await failingWith(GrpcStatus.UNAVAILABLE)
    const guard = grpcClientGuard({ breaker: strict })
    const c = connect(guard)
    for (let i = 0; i < 10; i++) expect((await call(c, 'echo', {})).code).toBe(GrpcStatus.UNAVAILABLE)
    expect(reached.echo).toBe(10)
    const rejected = await call(c, 'echo', {})
    expect(rejected.code).toBe(GrpcStatus.UNAVAILABLE)
    expect(rejected.details).toMatch(/open \(rejected locally\)/)
    expect(reached.echo).toBe(10) // never reached the network
    expect(guard.breakers.get('/test.Echo/Echo')!.stats().state).toBe('open')
    // Per method: the other method has its own breaker.
    expect((await call(c, 'other', {})).details).toBe('server says no')
    expect(reached.other).toBe(1)
    guard.close()
  })

  it('with per: target, one breaker covers every method of the client', async () => {
    const reached = await failingWith(GrpcStatus.DEADLINE_EXCEEDED)
    const guard = grpcClientGuard({ breaker: strict, per: 'target', target: 'echo-service' })
    const c = connect(guard)
    for (let i = 0; i < 10; i++) await call(c, i % 2 ? 'echo' : 'other', {})
    expect((await call(c, 'other', {})).details).toMatch(/rejected locally/)
    expect(reached.echo + reached.other).toBe(10)
    expect(guard.breakers.keys()).toEqual(['echo-service'])
    guard.close()
  })

  it('counts client errors (INVALID_ARGUMENT, NOT_FOUND) as successes, and failureCodes changes that', async () => {
    const reached = await failingWith(GrpcStatus.NOT_FOUND)
    const lenient = grpcClientGuard({ breaker: strict })
    const c = connect(lenient)
    for (let i = 0; i < 30; i++) expect((await call(c, 'echo', {})).code).toBe(GrpcStatus.NOT_FOUND)
    expect(reached.echo).toBe(30)
    expect(lenient.breakers.get('/test.Echo/Echo')!.stats()).toMatchObject({ accepts: 30, calls: 30, state: 'closed' })
    c.close()
    const picky = grpcClientGuard({ breaker: strict, failureCodes: [GrpcStatus.NOT_FOUND] })
    const d = connect(picky)
    for (let i = 0; i < 10; i++) await call(d, 'echo', {})
    expect((await call(d, 'echo', {})).details).toMatch(/rejected locally/)
    expect(reached.echo).toBe(40)
    lenient.close()
    picky.close()
  })

  it('does not count calls the caller cancelled', async () => {
    opened.server = await startEcho({ echo: () => undefined }) // never answers
    const guard = grpcClientGuard({ breaker: strict })
    const c = connect(guard)
    const ended: Array<Promise<number>> = []
    const calls = Array.from({ length: 12 }, () => {
      let unary: grpc.ClientUnaryCall | undefined
      ended.push(new Promise((resolve) => (unary = (c as any).echo({}, (e: grpc.ServiceError) => resolve(e.code)))))
      return unary as grpc.ClientUnaryCall
    })
    calls.forEach((u) => u.cancel())
    expect(await Promise.all(ended)).toEqual(Array(12).fill(GrpcStatus.CANCELLED))
    expect(guard.breakers.get('/test.Echo/Echo')!.stats().calls).toBe(0)
    guard.close()
  })

  it('drives a CircuitBreaker group as well', async () => {
    const reached = await failingWith(GrpcStatus.INTERNAL)
    const breakers = new BreakerGroup<CircuitBreaker>(
      () => new CircuitBreaker({ minimumCalls: 5, failureRatio: 0.5, openDuration: 60_000 }),
    )
    const c = connect(grpcClientGuard({ breakers }))
    for (let i = 0; i < 5; i++) await call(c, 'echo', {})
    expect(breakers.get('/test.Echo/Echo')!.state).toBe('open')
    expect((await call(c, 'echo', {})).details).toMatch(/rejected locally/)
    expect(reached.echo).toBe(5)
    breakers.close()
  })

  it('rejects bad options with typed errors', () => {
    const field = (options: object) => badOptionField(grpcClientGuard, options)
    expect(field({ per: 'host' })).toBe('per')
    expect(field({ per: 'target' })).toBe('target')
    expect(field({ failureCodes: [99] })).toBe('failureCodes')
    expect(field({ breaker: { success: 0 } })).toBe('success')
    expect(field({ breakers: {} })).toBe('breakers')
    expect(field({ grpc: {} })).toBe('grpc')
  })
})
