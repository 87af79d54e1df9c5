import * as grpc from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'

import { Quota } from '../../lib/components/ratelimit/quota'
import { grpcClientGuard, GrpcStatus } from '../../lib/entries/grpc'
import { call, closeAfterEach, EchoClient, startEcho } from './grpc-service'

const opened = closeAfterEach()
const frozen = (): number => 1000

describe('grpcClientGuard quotas', () => {
  it('a call waits for its target’s quota; one it cannot have ends with RESOURCE_EXHAUSTED, never sent', async () => {
    let reached = 0
    opened.server = await startEcho({ echo: (req, done) => (reached++, done(null, req.request)) })
    const quota = new Quota({ now: frozen, window: 60_000, requests: 2 })
    const guard = grpcClientGuard({ target: 'echo', quotas: { echo: { quota, maxWait: 0 } } })
    const c = (opened.client = new EchoClient(`127.0.0.1:${opened.server.port}`, grpc.credentials.createInsecure(), {
      interceptors: [guard],
    }))
    expect((await call(c, 'echo', { text: 'a' })).code).toBe(0)
    expect((await call(c, 'echo', { text: 'b' })).code).toBe(0)
    const refused = await call(c, 'echo', { text: 'c' })
    expect(refused.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    expect(refused.details).toMatch(/rejected locally/)
    expect(reached).toBe(2)
    guard.close()
    quota.close()
  })

  it('RESOURCE_EXHAUSTED with grpc-retry-pushback-ms pauses the quota', async () => {
    opened.server = await startEcho({
      echo: (_req, done) => {
        const trailers = new grpc.Metadata()
        trailers.set('grpc-retry-pushback-ms', '30000')
        done({ code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'slow down', metadata: trailers })
      },
    })
    const quota = new Quota({ now: frozen, window: 60_000, requests: 100 })
    const guard = grpcClientGuard({ target: 'echo', quotas: { echo: { quota, maxWait: 0 } } })
    const c = (opened.client = new EchoClient(`127.0.0.1:${opened.server.port}`, grpc.credentials.createInsecure(), {
      interceptors: [guard],
    }))
    expect((await call(c, 'echo', {})).details).toBe('slow down')
    expect(quota.stats().requests?.available).toBeLessThan(1)
    expect((await call(c, 'echo', {})).details).toMatch(/rejected locally/)
    guard.close()
    quota.close()
  })
})
