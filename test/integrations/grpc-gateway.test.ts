// The gateway options over gRPC (docs/guide/gateway.md): routes by method path, access lists (PERMISSION_DENIED),
// bans, and readiness as a function only.
import * as grpc from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'

import { AccessList, InvalidOptionError, TokenBucket } from '../../lib/index'
import { grpcServerGuard, GrpcStatus } from '../../lib/entries/grpc'
import { ManualClock } from '../helpers/manual-clock'
import { waitFor } from '../helpers/wait-for'
import { call, closeAfterEach, EchoClient, startEcho, type Unary } from './grpc-service'
import { controlledLimiter } from './inbound-scenarios'

const opened = closeAfterEach()

async function open(interceptor: ReturnType<typeof grpcServerGuard>, echo: Unary) {
  const server = (opened.server = await startEcho({ echo }, { interceptors: [interceptor] }))
  return (opened.client = new EchoClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure()))
}

const ok: Unary = (_req, done) => done(null, {})

describe('grpcServerGuard: routes, access lists, bans, readiness', () => {
  it('routes by method path: a method’s class and a service’s skip', async () => {
    const c = controlledLimiter(10)
    const routes = { '/test.Echo/Echo': { priority: 'critical' }, '/test.Echo/*': 'skip' } as const
    const client = await open(grpcServerGuard({ limiter: c.limiter, routes }), ok)
    c.hold(11)
    c.signal.load = 900
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK) // critical
    expect((await call(client, 'other', {})).code).toBe(GrpcStatus.OK) // skipped: never reaches the limiter
    await waitFor(() => c.limiter.inFlight === 11, { what: 'the critical call to be released' })
    expect(c.limiter.stats().admitted).toBe(12)
    c.releaseHeld()
    c.limiter.close()
  })

  it('a deny entry ends the call with PERMISSION_DENIED before its handler; an allow entry passes any limit', async () => {
    const list = new AccessList({ entries: { '127.0.0.1': 'deny' } })
    let handled = 0
    const bucket = new TokenBucket({ rate: 0.001, burst: 1, now: () => 0 })
    const client = await open(
      grpcServerGuard({ limiter: false, rateLimit: { limiter: bucket }, access: list }),
      (_r, done) => {
        handled++
        done(null, {})
      },
    )
    const denied = await call(client, 'echo', {})
    expect([denied.code, denied.details]).toEqual([GrpcStatus.PERMISSION_DENIED, 'denied'])
    list.set('127.0.0.1', 'allow')
    const codes = [await call(client, 'echo', {}), await call(client, 'echo', {})].map((r) => r.code)
    expect(codes).toEqual([GrpcStatus.OK, GrpcStatus.OK]) // past the rate limit too
    expect(handled).toBe(2)
    list.close()
  })

  it('bans a client refused too often: RESOURCE_EXHAUSTED, "banned", the pushback its rest', async () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 0.01, burst: 1, now: clock.now })
    const bans = { after: 1, duration: 30_000, now: clock.now }
    const client = await open(grpcServerGuard({ limiter: false, rateLimit: { limiter: bucket }, bans }), ok)
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK)
    expect((await call(client, 'echo', {})).details).toMatch(/rate limited/)
    const banned = await call(client, 'echo', {})
    expect([banned.code, banned.details]).toEqual([GrpcStatus.RESOURCE_EXHAUSTED, 'banned, retry after 30 s'])
  })

  it('readiness: guard.readiness answers a health service; a path to answer is refused', () => {
    const c = controlledLimiter(2)
    const interceptor = grpcServerGuard({ limiter: c.limiter, readiness: true })
    expect(interceptor.guard.readiness?.ready()).toBe(true)
    interceptor.guard.close()
    expect(() => grpcServerGuard({ limiter: c.limiter, readiness: { path: '/ready' } })).toThrow(InvalidOptionError)
    c.limiter.close()
  })
})
