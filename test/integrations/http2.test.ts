// node:http2 servers behind the inbound guard, through both of node:http2's APIs, with a real http2 client: the
// shared scenarios (as over HTTP/1.1), then what HTTP/2 adds: many streams on one session, streams reset by either
// side, and sessions that die with streams in flight.
import * as http2 from 'http2'
import { describe, expect, it } from 'vitest'

import { http2StreamGuard, httpGuard, type InboundGuard, type InboundGuardOptions } from '../../lib/entries/http'
import { connect, http2Client, request, serving2 } from './http2-client'
import { waitFor } from '../helpers/wait-for'
import { type AppHandler, controlledLimiter, inboundScenarios, type StartServer } from './inbound-scenarios'

/** A server behind the guard, and the guard (its stats for the scenarios that count). */
type MakeServer = (
  guard: InboundGuardOptions<any>,
  app: AppHandler,
) => http2.Http2Server & { guard?: InboundGuard<any> }

function withGuard(server: http2.Http2Server, guard: InboundGuard<any>) {
  return Object.assign(server, { guard })
}

const compatibilityServer: MakeServer = (guard, app) => {
  const listener = httpGuard<http2.Http2ServerRequest, http2.Http2ServerResponse>(
    (req, res) =>
      app((req as { signal?: AbortSignal }).signal, (name, value) => res.setHeader(name, value)).then(
        (body) => void res.end(body),
      ),
    guard,
  )
  return withGuard(http2.createServer(listener), listener.guard)
}

const coreServer: MakeServer = (guard, app) => {
  const listener = http2StreamGuard((stream) => {
    const headers: http2.OutgoingHttpHeaders = {} // the core API sends headers with the response: kept till then
    return app((stream as { signal?: AbortSignal }).signal, (name, value) => (headers[name] = value)).then((body) => {
      if (stream.destroyed) return // reset, or its session died: nothing to answer
      stream.respond({ ...headers, ':status': 200 })
      stream.end(body)
    })
  }, guard)
  return withGuard(http2.createServer().on('stream', listener), listener.guard)
}

/** A gate the application waits at, counting the requests that reached it. */
function gatedApp() {
  let open: () => void = () => undefined
  const gate = new Promise<void>((r) => (open = r))
  const app = {
    calls: 0,
    open: () => open(),
    handler: async () => {
      app.calls++
      await gate
      return 'late'
    },
  }
  return app
}

const apis: Array<[string, MakeServer]> = [
  ['compatibility API, httpGuard', compatibilityServer],
  ['core API, http2StreamGuard', coreServer],
]

for (const [api, make] of apis) {
  const start: StartServer = async (guard, app) => {
    const server = make(guard, app)
    return { ...(await serving2(server)), stats: () => (server.guard as InboundGuard<any>).stats() }
  }

  describe(`node:http2 (${api})`, () => {
    inboundScenarios(start, http2Client)

    it('many streams on one session: each token is released once, when its stream ends', async () => {
      const { limiter } = controlledLimiter(50)
      const server = await serving2(make({ limiter }, async () => 'ok'))
      const session = connect(server.port)
      const replies = await Promise.all(Array.from({ length: 20 }, () => request(session, '/work')))
      expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200))
      await waitFor(() => limiter.inFlight === 0, { what: 'every stream to give its token back' })
      expect(limiter.stats()).toMatchObject({ admitted: 20, invalidReleases: 0 })
      session.close()
      await server.close()
      limiter.close()
    })

    for (const side of ['client', 'server'] as const) {
      it(`a session the ${side} destroys with streams in flight releases each token once; late answers release nothing`, async () => {
        const { limiter } = controlledLimiter(50)
        const app = gatedApp()
        const server = await serving2(make({ limiter }, app.handler))
        const session = connect(server.port)
        const streams = Array.from({ length: 6 }, () =>
          session.request({ ':path': '/work' }).on('error', () => undefined),
        )
        await waitFor(() => app.calls === 6, { what: 'every stream to reach the application' })
        expect(limiter.inFlight).toBe(6)
        if (side === 'client') session.destroy()
        else for (const s of server.sessions) s.destroy()
        await waitFor(() => limiter.inFlight === 0, { what: 'the dead session’s streams to give their tokens back' })
        app.open() // the application answers streams that are gone
        await waitFor(() => streams.every((s) => s.destroyed), { what: 'the client to see its streams closed' })
        await new Promise((r) => setImmediate(r))
        expect(limiter.stats()).toMatchObject({ inFlight: 0, admitted: 6, invalidReleases: 0 })
        await server.close()
        limiter.close()
      })
    }

    it('a stream the server resets mid-handler releases its token once', async () => {
      const { limiter } = controlledLimiter(50)
      const app = gatedApp()
      const serverStreams: http2.ServerHttp2Stream[] = []
      const raw = make({ limiter }, app.handler).on('stream', (s) => serverStreams.push(s.on('error', () => undefined)))
      const server = await serving2(raw)
      const session = connect(server.port)
      const stream = session.request({ ':path': '/work' }).on('error', () => undefined)
      await waitFor(() => app.calls === 1, { what: 'the stream to reach the application' })
      const closed = new Promise((r) => stream.once('close', r))
      serverStreams[0].close(http2.constants.NGHTTP2_INTERNAL_ERROR) // as a handler would on an internal error
      await closed
      expect(stream.rstCode).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR)
      await waitFor(() => limiter.inFlight === 0, { what: 'the reset stream to give its token back' })
      app.open()
      await new Promise((r) => setImmediate(r))
      expect(limiter.stats()).toMatchObject({ admitted: 1, invalidReleases: 0 })
      session.close()
      await server.close()
      limiter.close()
    })

    it('answers a client leaves unread keep their places on its session: streams over connectionConcurrency get 429', async () => {
      const { limiter } = controlledLimiter(50)
      const server = await serving2(make({ limiter, connectionConcurrency: 5 }, async () => 'ok'))
      const session = http2.connect(`http://127.0.0.1:${server.port}`, { settings: { initialWindowSize: 0 } })
      session.on('error', () => undefined)
      await new Promise((resolve) => session.once('remoteSettings', resolve))
      const statuses: number[] = []
      for (let i = 0; i < 8; i++) {
        const stream = session.request({ ':path': '/work' }).on('error', () => undefined)
        stream.on('response', (headers) => statuses.push(Number(headers[':status']))) // headers pass a window of 0
      }
      await waitFor(() => statuses.length === 8, { what: 'every stream to be answered' })
      expect(statuses.sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429])
      expect(limiter.inFlight).toBe(0) // the five answers are made: their tokens came back, their places did not
      session.destroy()
      await server.close()
      expect(limiter.stats()).toMatchObject({ admitted: 5, invalidReleases: 0 })
      limiter.close()
    })

    it('answers a shed HEAD request with the headers alone', async () => {
      const c = controlledLimiter(2)
      const server = await serving2(make({ limiter: c.limiter }, async () => 'ok'))
      c.hold(3)
      c.signal.load = 900
      const session = connect(server.port)
      const r = await request(session, '/work', {}, 'HEAD')
      expect(r.status).toBe(503)
      expect(r.headers['retry-after']).toBe('1')
      expect(r.body).toBe('')
      session.close()
      await server.close()
      c.releaseHeld()
      c.limiter.close()
    })
  })
}
