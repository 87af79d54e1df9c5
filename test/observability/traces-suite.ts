// OpenTelemetryTraces' tests, run against each trace SDK major by traces-sdk<major>.test.ts: span events for sheds,
// fallbacks, queue waits and breaker transitions, on the span of the request they are about (a real node:http server,
// each request in a span made active the way the HTTP instrumentation makes it).
import * as http from 'http'
import type * as otelApi from '@opentelemetry/api'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { CircuitBreaker, InvalidArgumentError, InvalidOptionError } from '../../lib/index'
import { httpGuard, type InboundGuardOptions } from '../../lib/entries/http'
import { OpenTelemetryTraces } from '../../lib/ops/metrics/opentelemetry'
import { controlledLimiter, get, serving, type TestServer } from '../integrations/inbound-scenarios'
import { fullLimiter } from '../integrations/queue-scenarios'
import { waitFor } from '../helpers/wait-for'

type Api = typeof otelApi

/** What a trace SDK major gives the suite: its API, and a way to register and unregister a provider and a context. */
export interface TraceSdk {
  label: string
  api: Api
  /** Registers a tracer provider exporting to memory and a context manager; `sampled: false` records nothing. */
  register(sampled?: boolean): { finished(): FinishedSpan[]; unregister(): Promise<void> }
}

export interface FinishedSpan {
  name: string
  events: Array<{ name: string; attributes?: Record<string, unknown> }>
}

/** The events of the span named `name`, as name and attributes. */
const events = (spans: FinishedSpan[], name: string) =>
  (spans.find((s) => s.name === name)?.events ?? []).map((e) => ({ name: e.name, attributes: e.attributes }))

export function tracesSuite(sdk: TraceSdk): void {
  const { api } = sdk
  const tracer = () => api.trace.getTracer('test')
  let server: TestServer | undefined
  let registered: ReturnType<TraceSdk['register']> | undefined
  let traces: OpenTelemetryTraces

  beforeEach(() => {
    traces = new OpenTelemetryTraces({ api })
  })
  afterEach(async () => {
    traces.close()
    await server?.close()
    await registered?.unregister()
    server = registered = undefined
  })

  /** A node:http server whose requests run in an active span named `GET <path>`, guarded and traced as 'api'. */
  async function open(options: InboundGuardOptions<http.IncomingMessage>) {
    const guarded = httpGuard((_req, res) => res.end('ok'), options)
    traces.add('api', guarded)
    const listening = http
      .createServer((req, res) =>
        tracer().startActiveSpan(`GET ${req.url}`, (span) => {
          res.once('close', () => span.end())
          guarded(req, res)
        }),
      )
      .listen(0, '127.0.0.1')
    server = await serving(listening)
    return { port: server.port, guard: guarded.guard }
  }

  describe(`OpenTelemetryTraces (${sdk.label})`, () => {
    it('adds a bulwark.shed event to the span of each shed request, with the live rule in force', async () => {
      registered = sdk.register()
      const c = controlledLimiter(2)
      const { port } = await open({ limiter: c.limiter, retryAfter: 7 })
      expect((await get(port, {}, '/admitted')).status).toBe(200)
      c.hold(3)
      c.signal.load = 900
      expect((await get(port, {}, '/shed')).status).toBe(503)
      c.limiter.configure({ cooldown: 500 })
      expect((await get(port, {}, '/shed-again')).status).toBe(503)
      const spans = registered.finished()
      expect(events(spans, 'GET /admitted')).toEqual([])
      const shed = {
        'bulwark.component.name': 'api',
        'bulwark.reason': 'in-flight',
        'bulwark.priority': 'normal',
        'bulwark.retry_after': 7,
      }
      expect(events(spans, 'GET /shed')).toEqual([
        { name: 'bulwark.shed', attributes: { ...shed, 'bulwark.rule.version': 0 } },
      ])
      expect(events(spans, 'GET /shed-again')[0].attributes).toEqual({ ...shed, 'bulwark.rule.version': 1 })
      c.releaseHeld()
      c.limiter.close()
    })

    it("adds bulwark.fallback with the fallback's outcome", async () => {
      registered = sdk.register()
      const c = controlledLimiter(2)
      let declines = false
      const fallback = () => (declines ? undefined : { status: 200, body: 'cached' })
      const { port } = await open({ limiter: c.limiter, fallback })
      c.hold(3)
      c.signal.load = 900
      expect((await get(port, {}, '/answered')).body).toBe('cached')
      declines = true
      expect((await get(port, {}, '/declined')).status).toBe(503)
      const spans = registered.finished()
      const answered = events(spans, 'GET /answered')
      expect(answered.map((e) => e.name)).toEqual(['bulwark.shed', 'bulwark.fallback'])
      expect(answered[1].attributes).toEqual({
        'bulwark.component.name': 'api',
        'bulwark.reason': 'overload',
        'bulwark.outcome': 'answered',
      })
      expect(events(spans, 'GET /declined')[1].attributes).toMatchObject({ 'bulwark.outcome': 'declined' })
      c.releaseHeld()
      c.limiter.close()
    })

    it("puts a queue wait on the waiting request's span, not on the span of the release that ends it", async () => {
      registered = sdk.register()
      const { limiter, releaseHeld } = fullLimiter(60_000)
      const { port } = await open({ limiter, retryAfter: 2 })
      const admitted = get(port, {}, '/waits')
      await waitFor(() => limiter.stats().queue?.length === 1, { what: 'the request to wait' })
      tracer().startActiveSpan('releaser', (span) => {
        releaseHeld() // the queue admits its waiter in a microtask of this span's context
        span.end()
      })
      expect((await admitted).status).toBe(200)
      limiter.close()

      const timing = fullLimiter(50)
      server = undefined
      const second = await open({ limiter: timing.limiter, retryAfter: 2 })
      const timedOut = get(second.port, {}, '/times-out')
      await waitFor(() => timing.limiter.stats().queue?.length === 1, { what: 'the second request to wait' })
      timing.clock.advance(50)
      expect((await timedOut).status).toBe(503)
      const spans = registered.finished()
      expect(events(spans, 'releaser')).toEqual([])
      const waited = events(spans, 'GET /waits')
      expect(waited.map((e) => e.name)).toEqual(['bulwark.queue.wait'])
      expect(waited[0].attributes).toMatchObject({
        'bulwark.component.name': 'api',
        'bulwark.priority': 'normal',
        'bulwark.outcome': 'admitted',
      })
      expect(waited[0].attributes?.['bulwark.queue.duration']).toBeGreaterThan(0)
      const refused = events(spans, 'GET /times-out')
      expect(refused.map((e) => e.name)).toEqual(['bulwark.queue.wait', 'bulwark.shed'])
      expect(refused[0].attributes).toMatchObject({ 'bulwark.outcome': 'queue-timeout' })
      expect(refused[1].attributes).toMatchObject({ 'bulwark.reason': 'queue-timeout', 'bulwark.retry_after': 2 })
      timing.releaseHeld()
      timing.limiter.close()
    })

    it("adds a breaker's state change, from and to, to the span of the call that caused it", () => {
      registered = sdk.register()
      const breaker = new CircuitBreaker({ strategy: 'errorCount', failureCount: 2, minimumCalls: 2 })
      traces.add('payments', breaker)
      for (const call of ['call 1', 'call 2']) {
        tracer().startActiveSpan(call, (span) => {
          if (breaker.tryAcquire()) breaker.recordFailure()
          span.end()
        })
      }
      const spans = registered.finished()
      expect(events(spans, 'call 1')).toEqual([])
      expect(events(spans, 'call 2')).toEqual([
        {
          name: 'bulwark.breaker.state_change',
          attributes: {
            'bulwark.component.name': 'payments',
            'bulwark.state.from': 'closed',
            'bulwark.state.to': 'open',
          },
        },
      ])
      breaker.close()
    })

    it('records nothing on a span that is not sampled, and nothing once disposed', async () => {
      registered = sdk.register(false)
      const c = controlledLimiter(2)
      const { port, guard } = await open({ limiter: c.limiter })
      c.hold(3)
      c.signal.load = 900
      expect((await get(port, {}, '/unsampled')).status).toBe(503)
      expect(registered.finished()).toEqual([]) // a span that does not record is not exported either
      expect(guard.tracer).toBeDefined()
      traces.close()
      expect(guard.tracer).toBeUndefined()
      c.releaseHeld()
      c.limiter.close()
    })

    it('asks the API nothing per decision while no context manager is registered', async () => {
      const active = vi.spyOn(api.trace, 'getActiveSpan')
      const c = controlledLimiter(2)
      const { port } = await open({ limiter: c.limiter })
      c.hold(3)
      c.signal.load = 900
      for (let i = 0; i < 3; i++) expect((await get(port)).status).toBe(503)
      expect(active).not.toHaveBeenCalled()
      active.mockRestore()
      c.releaseHeld()
      c.limiter.close()
    })

    it('refuses what it cannot trace, with the argument named', () => {
      expect(() => traces.add('', new CircuitBreaker())).toThrow(InvalidArgumentError)
      expect(() => traces.add('x', { tryAcquire: () => true })).toThrow(/`component`.*an inbound guard/)
      const guarded = httpGuard((_req, res) => res.end())
      traces.add('first', guarded)
      expect(() => traces.add('second', guarded.guard)).toThrow(/a guard no OpenTelemetryTraces traces yet/)
      expect(() => new OpenTelemetryTraces({ api: {} as Api })).toThrow(InvalidOptionError)
    })
  })
}
