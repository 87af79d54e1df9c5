// Deadlines passed on: an inbound guard with deadline.propagate runs its handler in the deadline's context, and the
// outbound guards (undiciGuard, grpcClientGuard) send the time left on, or send nothing once it has passed.
import * as grpc from '@grpc/grpc-js'
import * as http from 'http'
import { afterEach, describe, expect, it } from 'vitest'

import { grpcClientGuard, grpcServerGuard, GrpcStatus } from '../../lib/entries/grpc'
import { httpGuard, remainingDeadlineMs } from '../../lib/entries/http'
import { undiciGuard } from '../../lib/entries/undici'
import { waitFor } from '../helpers/wait-for'
import { call, EchoClient, startEcho, type EchoServer } from './grpc-service'
import { get, serving, type TestServer } from './inbound-scenarios'
import { undiciMajors } from './undici-majors'

const { Agent, request } = undiciMajors[0].undici // the newest this Node runs

const opened: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close()
})

describe('deadline propagation', () => {
  it('undiciGuard sends the inbound request’s remaining time on, and nothing once it has passed', async () => {
    const seen: Array<string | undefined> = []
    const downstream = await serving(
      http
        .createServer((req, res) => {
          seen.push(req.headers['x-request-timeout-ms'] as string | undefined)
          res.end('down')
        })
        .listen(0, '127.0.0.1'),
    )
    opened.push(downstream)
    const guard = undiciGuard({ bulkheads: false })
    const dispatcher = new Agent().compose(guard)
    opened.push(dispatcher, guard)
    const url = `http://127.0.0.1:${downstream.port}/`
    const front: TestServer = await serving(
      http
        .createServer(
          httpGuard(
            async (req, res) => {
              if (req.url === '/late')
                await waitFor(() => (remainingDeadlineMs() ?? 1) <= 0, { what: 'the deadline to pass' })
              try {
                const r = await request(url, { dispatcher })
                res.end(await r.body.text())
              } catch (error) {
                res.end(`not sent: ${(error as { reason?: string }).reason}`)
              }
            },
            { limiter: false, deadline: { header: 'x-deadline-ms', trust: () => true, propagate: true } },
          ),
        )
        .listen(0, '127.0.0.1'),
    )
    opened.push(front)
    expect((await get(front.port, { 'x-deadline-ms': '5000' })).body).toBe('down')
    expect(Number(seen[0])).toBeGreaterThan(4000)
    expect(Number(seen[0])).toBeLessThanOrEqual(5000)
    expect((await get(front.port)).body).toBe('down') // no deadline: no header
    expect(seen[1]).toBeUndefined()
    expect((await get(front.port, { 'x-deadline-ms': '30' }, '/late')).body).toBe('not sent: deadline')
    expect(seen).toHaveLength(2)
  })

  it('grpcClientGuard gives a downstream call the inbound call’s deadline (grpc-timeout)', async () => {
    const deadlines: number[] = []
    const back: EchoServer = await startEcho({
      echo: (c, done) => {
        deadlines.push(Number(c.getDeadline()))
        done(null, {})
      },
    })
    opened.push(back)
    const outbound = grpcClientGuard({ target: 'back', per: 'target', bulkheads: false })
    const backClient = new EchoClient(`127.0.0.1:${back.port}`, grpc.credentials.createInsecure(), {
      interceptors: [outbound],
    })
    opened.push(backClient, outbound)
    const front = await startEcho(
      { echo: (_c, done) => void call(backClient, 'echo', {}).then((r) => done(null, { code: r.code })) },
      { interceptors: [grpcServerGuard({ limiter: false, deadline: { propagate: true } })] },
    )
    opened.push(front)
    const client = new EchoClient(`127.0.0.1:${front.port}`, grpc.credentials.createInsecure())
    opened.push(client)
    const sent = Date.now()
    const r = await call(client, 'echo', {}, { deadline: 3000 })
    expect(r).toMatchObject({ code: GrpcStatus.OK, value: { code: GrpcStatus.OK } })
    // The inbound deadline, not none: grpc-timeout is relative, so each hop adds its transit time (a busy machine's
    // tens of ms) to the deadline it computes on arrival.
    expect(deadlines[0]).toBeLessThanOrEqual(sent + 3000 + 500)
    expect(deadlines[0]).toBeGreaterThan(sent)
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK) // no inbound deadline: none passed on
    expect(deadlines[1]).toBe(Infinity)
  })
})
