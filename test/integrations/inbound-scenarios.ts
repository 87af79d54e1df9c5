// The same behaviour, asserted against every inbound adapter over real sockets on loopback: each framework's test
// file gives a way to start its server with a guard, and these scenarios run against it.
import * as http from 'http'
import * as net from 'net'
import type { AddressInfo } from 'net'
import { afterEach, expect, it, vi } from 'vitest'

import { BbrLimiter, KeyedLimiter, TokenBucket } from '../../lib/index'
import { type InboundGuardOptions, type InboundGuardStats } from '../../lib/entries/http'
import { ManualClock } from '../helpers/manual-clock'
import { answerSafetyScenarios } from './answer-safety-scenarios'
import { degradeScenarios } from './degrade-scenarios'
import { queueScenarios } from './queue-scenarios'
import { shadowScenarios } from './shadow-scenarios'
import { keyConcurrencyScenarios } from './key-concurrency-scenarios'
import { slowClientScenarios } from './slow-client-scenarios'
import { gatewayScenarios } from './gateway-scenarios'
import { http1Slow, type SlowClient } from './slow-clients'
import { loopTurns } from '../helpers/loop-turns'
import { waitFor } from '../helpers/wait-for'

export interface TestServer {
  port: number
  close(): Promise<void>
  /** The guard's stats (the adapters' test files give them; scenarios that count need them). */
  stats?: () => InboundGuardStats
}

/**
 * The application behind the guard: resolves with the body to answer 200 with; a rejection goes where the
 * framework sends a handler's errors.
 */
/**
 * The application under test; `signal` is the request's own, as its adapter hands it out (docs/guide/degrade.md);
 * `setHeader` sets a response header the framework's way, before the body.
 */
export type AppHandler = (signal?: AbortSignal, setHeader?: SetHeader) => Promise<string>
export type SetHeader = (name: string, value: string) => void

export type StartServer = (guard: InboundGuardOptions<any>, app: AppHandler) => Promise<TestServer>

export interface Reply {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** A listening node:http server (or one that will listen: it is waited for) as a TestServer. */
export async function serving(server: http.Server): Promise<TestServer> {
  if (!server.listening) await new Promise<void>((r) => server.once('listening', r))
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((r) => {
        server.close(() => r())
        server.closeAllConnections() // idle keep-alive sockets of the clients' agents
      }),
  }
}

export function get(port: number, headers: Record<string, string> = {}, path = '/work'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
  })
}

/** How the scenarios talk to a server: HTTP/1.1 (node:http, a connection per request) or HTTP/2 (http2-client.ts). */
export interface ScenarioClient {
  get(port: number, headers?: Record<string, string>, path?: string): Promise<Reply>
  /** Starts a request the server will not answer; `abort()` makes the client give up on it (connection or stream). */
  start(port: number, path: string): { abort(): void }
  /** Whether requests can be pipelined on one connection (HTTP/1.1). */
  pipelining: boolean
  /** Clients that read slowly or not at all, and batches of requests on one connection (slow-clients.ts). */
  slow: SlowClient
}

export const http1Client: ScenarioClient = {
  get,
  start(port, path) {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false })
    req.on('error', () => undefined)
    return { abort: () => req.destroy() }
  },
  pipelining: true,
  slow: http1Slow,
}

/** A limiter whose load and clock the test sets; `hold(n)` takes n tokens at load 0 and keeps them. */
export function controlledLimiter(minInFlight: number) {
  const signal = { load: 0 }
  const clock = new ManualClock(1000)
  const limiter = new BbrLimiter({ window: 1000, buckets: 10, minInFlight, signal: () => signal.load, now: clock.now })
  const held: number[] = []
  const hold = (n: number) => {
    const saved = signal.load
    signal.load = 0
    for (let i = 0; i < n; i++) held.push(limiter.tryAcquire('critical'))
    signal.load = saved
  }
  const releaseHeld = () => held.splice(0).forEach((t) => limiter.release(t))
  return { limiter, signal, clock, hold, releaseHeld }
}

/** Registers the shared scenarios for one adapter, over HTTP/1.1 unless another client is given. */
export function inboundScenarios(start: StartServer, client: ScenarioClient = http1Client): void {
  const get = client.get
  let server: TestServer | undefined
  let calls = 0
  const app: AppHandler = async () => {
    calls++
    return 'ok'
  }
  const open = async (guard: InboundGuardOptions<any>, handler: AppHandler = app) => {
    calls = 0
    server = await start(guard, handler)
    return server.port
  }
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  queueScenarios(open, () => calls, client)
  shadowScenarios(open, () => calls, client)

  priorityScenarios(async (guard) => {
    const port = await open(guard)
    return async (headers) => (await get(port, headers)).status === 200
  })

  it('admits requests and releases every token exactly once, its response time counted', async () => {
    const { limiter } = controlledLimiter(20)
    const release = vi.spyOn(limiter, 'release')
    const port = await open({ limiter })
    const replies = await Promise.all(Array.from({ length: 20 }, () => get(port)))
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(replies[0].body).toBe('ok')
    expect(calls).toBe(20)
    await waitFor(() => limiter.inFlight === 0, { what: 'in-flight to return to 0' })
    const s = limiter.stats()
    expect(s.admitted).toBe(20)
    expect(s.invalidReleases).toBe(0)
    expect(release.mock.calls.map((call) => call[1])).toEqual(Array(20).fill(true)) // answered whole, below 500
    limiter.close()
  })

  it('sheds with 503, Retry-After and a JSON body, without calling the handler', async () => {
    const c = controlledLimiter(2)
    const port = await open({ limiter: c.limiter, retryAfter: 7 })
    c.hold(3)
    c.signal.load = 900
    const r = await get(port)
    expect(r.status).toBe(503)
    expect(r.headers['retry-after']).toBe('7')
    expect(r.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(r.body)).toEqual({ error: 'overloaded', reason: 'in-flight' })
    expect(calls).toBe(0)
    expect(c.limiter.stats().shedInFlight).toBe(1)
    c.releaseHeld()
    c.signal.load = 0
    expect((await get(port)).status).toBe(200)
    expect(calls).toBe(1)
    c.limiter.close()
  })

  it('answers 429 with the rate limiter’s Retry-After, per key, before the limiter is asked', async () => {
    const clock = new ManualClock(0)
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 0.25, burst: 2, now: clock.now }), {
      now: clock.now,
    })
    const c = controlledLimiter(20)
    const key = (req: any) => String(headerOf(req, 'x-client'))
    const port = await open({ limiter: c.limiter, rateLimit: { limiter: perClient, key } })
    const a = { 'x-client': 'a' }
    expect((await get(port, a)).status).toBe(200)
    expect((await get(port, a)).status).toBe(200)
    const limited = await get(port, a)
    expect(limited.status).toBe(429)
    expect(limited.headers['retry-after']).toBe('4') // one token at 0.25 per second
    expect(JSON.parse(limited.body)).toEqual({ error: 'rate limited' })
    expect((await get(port, { 'x-client': 'b' })).status).toBe(200)
    expect(calls).toBe(3)
    expect(c.limiter.stats().admitted).toBe(3) // the limited request never reached the limiter
    clock.advance(4000)
    expect((await get(port, a)).status).toBe(200)
    c.limiter.close()
  })

  it('keys the rate limit by client address by default', async () => {
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now: () => 0 }))
    const port = await open({ limiter: false, rateLimit: { limiter: perClient } })
    expect((await get(port, { 'x-client': 'a' })).status).toBe(200)
    expect((await get(port, { 'x-client': 'b' })).status).toBe(429)
    expect(perClient.has('127.0.0.1') || perClient.has('::ffff:127.0.0.1')).toBe(true)
  })

  it('releases the tokens of requests aborted by the client mid-handler, once, even if the handler answers later', async () => {
    const { limiter } = controlledLimiter(50)
    const release = vi.spyOn(limiter, 'release')
    let open_: () => void = () => undefined
    const gate = new Promise<void>((r) => (open_ = r))
    let answered = 0
    const port = await open({ limiter }, async () => {
      calls++
      await gate
      answered++
      return 'late'
    })
    const requests = Array.from({ length: 5 }, () => client.start(port, '/work'))
    await waitFor(() => calls === 5, { what: 'every request to reach the handler' })
    expect(limiter.inFlight).toBe(5)
    requests.forEach((req) => req.abort())
    await waitFor(() => limiter.inFlight === 0, { what: 'aborted requests to give their tokens back' })
    open_() // the handlers now answer on closed connections: no second release
    await waitFor(() => answered === 5, { what: 'the handlers to answer' })
    await loopTurns() // what their answers set off
    const s = limiter.stats()
    expect(s.inFlight).toBe(0)
    expect(s.invalidReleases).toBe(0)
    expect(s.admitted).toBe(5)
    expect(release.mock.calls.map((call) => call[1])).toEqual(Array(5).fill(false)) // abandoned: time not counted
    limiter.close()
  })

  // HTTP/1.1 only: HTTP/2 multiplexes streams instead.
  if (client.pipelining)
    it('releases pipelined requests queued behind an unanswered one when the connection drops', async () => {
      const { limiter } = controlledLimiter(50)
      const port = await open({ limiter }, async () => {
        calls++
        return new Promise<string>(() => undefined) // never answers
      })
      const socket = net.connect(port, '127.0.0.1')
      socket.on('error', () => undefined)
      socket.write('GET /work HTTP/1.1\r\nHost: test\r\n\r\n'.repeat(4))
      await waitFor(() => calls === 4, { what: 'the pipelined requests to reach the handler' })
      expect(limiter.inFlight).toBe(4)
      socket.destroy()
      await waitFor(() => limiter.inFlight === 0, { what: 'queued responses to give their tokens back' })
      expect(limiter.stats().invalidReleases).toBe(0)
      limiter.close()
    })

  degradeScenarios(start, client)
  answerSafetyScenarios(start, client)
  keyConcurrencyScenarios(start, client)
  slowClientScenarios(open, client)
  gatewayScenarios(open, () => calls, client)
}

/** A request's header (gRPC: metadata) on any adapter's request object, for `priority` and `trustPriority`. */
export function headerOf(request: any, name: string): unknown {
  if (request.metadata !== undefined) return request.metadata.get(name)[0] // gRPC
  const headers = request.headers ?? request.req?.headers ?? request.request?.headers
  if (headers !== undefined) return headers[name] // node:http, http2, Express, Fastify; Koa's ctx
  return request.req?.header?.(name) // Hono's context
}

/** A request's path on any adapter's request object (Hono: its context), for options that choose by route. */
export function pathOf(request: any): string {
  if (typeof request.req?.path === 'string') return request.req.path // Hono's context
  return request.url ?? request.req?.url ?? request.raw?.url ?? request.headers?.[':path']
}

/** Sends one request with these headers (gRPC: metadata); resolves whether it was admitted. */
export type SendRequest = (headers: Record<string, string>) => Promise<boolean>

/**
 * Who chooses a request's priority (issue 13, docs/guide/trust.md), asserted for one adapter: `open` starts its
 * server with these guard options. Every scenario saturates a limiter so that only high and critical pass.
 */
export function priorityScenarios(open: (guard: InboundGuardOptions<any>) => Promise<SendRequest>): void {
  /** Each request of `sequence` ([headers, label]) sent in turn against a saturated limiter: label -> admitted. */
  async function outcomes(guard: InboundGuardOptions<any>, sequence: Array<[Record<string, string>, string]>) {
    const c = controlledLimiter(10)
    const send = await open({ limiter: c.limiter, ...guard })
    c.hold(11) // shares of 10: low 8, normal 10, high 11, critical 12
    c.signal.load = 900
    const admitted: Record<string, boolean> = {}
    for (const [headers, label] of sequence) {
      admitted[label] = await send(headers)
      await waitFor(() => c.limiter.inFlight === 11, { what: 'the admitted request to be released' })
    }
    const byPriority = c.limiter.stats().byPriority
    c.releaseHeld()
    c.limiter.close()
    return { admitted, byPriority }
  }

  it('by default no client chooses its priority: x-priority of any value is shed like no header', async () => {
    const values = ['low', 'normal', 'high', 'critical', 'bogus']
    const sequence = values.map((v): [Record<string, string>, string] => [{ 'x-priority': v }, v])
    const { admitted, byPriority } = await outcomes({}, [[{}, 'none'], ...sequence])
    expect(admitted).toEqual({ none: false, low: false, normal: false, high: false, critical: false, bogus: false })
    expect(byPriority.normal.shedInFlight).toBe(6) // every request in the default class
  })

  it('priority(request) decides; a header without trustPriority may lower a class, never raise it', async () => {
    const guard: InboundGuardOptions<any> = {
      priority: (request) => (headerOf(request, 'x-route') === 'health' ? 'critical' : 'normal'),
      priorityHeader: 'x-priority',
    }
    const { admitted } = await outcomes(guard, [
      [{ 'x-route': 'health' }, 'health'],
      [{ 'x-route': 'health', 'x-priority': 'low' }, 'health lowered to low'],
      [{ 'x-priority': 'critical' }, 'normal asking for critical'],
      [{ 'x-priority': 'high' }, 'normal asking for high'],
    ])
    expect(admitted).toEqual({
      health: true,
      'health lowered to low': false,
      'normal asking for critical': false,
      'normal asking for high': false,
    })
  })

  it('trustPriority: a trusted request gets the class its header names, others cannot raise theirs', async () => {
    const asked: string[] = []
    const trustPriority = (request: unknown) => {
      asked.push(String(headerOf(request, 'x-priority')))
      return headerOf(request, 'x-internal') === 'yes'
    }
    const { admitted } = await outcomes({ trustPriority }, [
      [{ 'x-priority': 'critical', 'x-internal': 'yes' }, 'trusted critical'],
      [{ 'x-priority': 'high', 'x-internal': 'yes' }, 'trusted high'],
      [{ 'x-priority': 'critical' }, 'untrusted critical'],
      [{ 'x-internal': 'yes' }, 'trusted, no header'],
      [{ 'x-priority': 'low', 'x-internal': 'yes' }, 'trusted low'],
    ])
    expect(admitted).toEqual({
      'trusted critical': true,
      'trusted high': true,
      'untrusted critical': false,
      'trusted, no header': false,
      'trusted low': false,
    })
    // Asked only when the header would raise the class (x-priority is the header trustPriority implies).
    expect(asked).toEqual(['critical', 'high', 'critical'])
  })
}
