// gRPC clients that do not read, or leave their streams idle (issue 32, docs/guide/trust.md), against a real grpc-js
// server: a raw node:http2 client speaks gRPC's framing with a window of 0, so the server can send headers (and a
// trailers-only status) but never a message.
import * as grpc from '@grpc/grpc-js'
import * as http2 from 'http2'
import { afterEach, describe, expect, it } from 'vitest'

import { grpcServerGuard, type GrpcServerGuardOptions, GrpcStatus } from '../../lib/entries/grpc'
import { waitFor } from '../helpers/wait-for'
import { call, EchoClient, echoService, type Unary } from './grpc-service'
import { controlledLimiter } from './inbound-scenarios'

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()),
}
const method = (path: string, requestStream: boolean, responseStream: boolean) => ({
  path,
  requestStream,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
})
const slowService = {
  big: method('/test.Slow/Big', false, false),
  watch: method('/test.Slow/Watch', false, true),
  chat: method('/test.Slow/Chat', true, true),
}

const answer = 'x'.repeat(64 * 1024)
const opened: Array<() => unknown> = []
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close()
})

/** A grpc-js server with the slow service and the echo service behind the guard; counts the handlers' starts. */
async function serve(guard: GrpcServerGuardOptions, messages = 3) {
  const started = { big: 0, watch: 0, watchEnded: 0, chat: 0 }
  const server = new grpc.Server({ interceptors: [grpcServerGuard(guard)] })
  server.addService(slowService, {
    big: (_call: unknown, done: grpc.sendUnaryData<unknown>) => {
      started.big++
      done(null, { answer })
    },
    watch: (stream: grpc.ServerWritableStream<unknown, unknown>) => {
      started.watch++
      for (let i = 0; i < messages; i++) stream.write({ i, answer })
      stream.end()
      started.watchEnded++
    },
    chat: (stream: grpc.ServerDuplexStream<unknown, unknown>) => {
      started.chat++
      stream.on('data', (m) => stream.write(m)) // waits for the client, which sends nothing
      stream.on('error', () => undefined)
    },
  })
  const empty: Unary = (_call, done) => done(null, {})
  server.addService(echoService, { echo: empty, other: empty })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  )
  opened.push(() => server.forceShutdown())
  return { port, started }
}

/** A raw HTTP/2 session that never lets the server send a message (window 0). */
async function neverReading(port: number): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 0 } })
  session.on('error', () => undefined)
  opened.push(() => session.destroy())
  await new Promise((resolve) => session.once('remoteSettings', resolve))
  return session
}

/** Starts a call on `session`: its request message and half-close sent, or (idle) nothing after its headers. */
function rawCall(session: http2.ClientHttp2Session, path: string, idle = false) {
  const stream = session.request(
    { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' },
    { endStream: false },
  )
  stream.on('error', () => undefined)
  let status: number | undefined
  let details: string | undefined
  stream.on('response', (headers) => {
    if (headers['grpc-status'] === undefined) return // a trailers-only status arrives in the response's headers
    status = Number(headers['grpc-status'])
    details = decodeURIComponent(String(headers['grpc-message']))
  })
  if (!idle) {
    const body = Buffer.from(JSON.stringify({}))
    const head = Buffer.alloc(5)
    head.writeUInt32BE(body.length, 1)
    stream.end(Buffer.concat([head, body]))
  }
  return { status: () => status, details: () => details }
}

describe('grpcServerGuard with clients that do not read', () => {
  it('unary calls whose client never reads give their tokens back once the handler has answered', async () => {
    const { limiter } = controlledLimiter(1000)
    const { port, started } = await serve({ limiter })
    const session = await neverReading(port)
    for (let i = 0; i < 50; i++) rawCall(session, slowService.big.path)
    await waitFor(() => started.big === 50, { what: 'every call to reach its handler' })
    await waitFor(() => limiter.inFlight === 0, { what: 'the answered calls to give their tokens back' })
    expect(limiter.stats()).toMatchObject({ admitted: 50, invalidReleases: 0 })
    limiter.close()
  })

  it("a server stream whose client never reads gives its token back at the handler's end", async () => {
    const { limiter } = controlledLimiter(1000)
    const { port, started } = await serve({ limiter })
    const session = await neverReading(port)
    for (let i = 0; i < 20; i++) rawCall(session, slowService.watch.path)
    await waitFor(() => started.watchEnded === 20, { what: 'every handler to write its messages and end' })
    await waitFor(() => limiter.inFlight === 0, { what: 'the ended streams to give their tokens back' })
    expect(limiter.stats()).toMatchObject({ admitted: 20, invalidReleases: 0 })
    limiter.close()
  })

  it('a stream whose handler has more unread messages than grpc-js buffers keeps its token until the client reads', async () => {
    const { limiter } = controlledLimiter(1000)
    const { port, started } = await serve({ limiter }, 40) // 40 messages: the handler waits for the client
    const session = await neverReading(port)
    rawCall(session, slowService.watch.path)
    await waitFor(() => started.watch === 1, { what: 'the handler to start' })
    expect(started.watchEnded).toBe(1) // it wrote all and ended: grpc-js's own stream buffers what waits
    expect(limiter.inFlight).toBe(1) // but its end has not come through: the call is still being answered
    session.destroy() // the client goes: the call is cancelled and its token given back
    await waitFor(() => limiter.inFlight === 0, { what: 'the cancelled call to give its token back' })
    expect(limiter.stats().invalidReleases).toBe(0)
    limiter.close()
  })

  it('idle streams: one connection holds at most connectionConcurrency calls, and other clients are served', async () => {
    const c = controlledLimiter(10) // a normal call is shed with 10 in flight at this load
    c.signal.load = 900
    const { port, started } = await serve({ limiter: c.limiter, connectionConcurrency: 5 })
    const session = await neverReading(port)
    const calls = Array.from({ length: 30 }, () => rawCall(session, slowService.chat.path, true))
    await waitFor(() => calls.filter((x) => x.status() !== undefined).length === 25, { what: 'the refusals' })
    expect(started.chat).toBe(5)
    expect(c.limiter.inFlight).toBe(5)
    const refused = calls.find((x) => x.status() !== undefined)
    expect(refused?.status()).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    expect(refused?.details()).toMatch(/too many concurrent calls on one connection/)
    // Another client, on its own connection, is not shed: the idle streams hold 5 of the limiter's 10.
    const client = new EchoClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure())
    opened.push(() => client.close())
    expect((await call(client, 'echo', {})).code).toBe(GrpcStatus.OK)
    session.destroy() // the client goes: each idle call gives its token and its place back at once
    await waitFor(() => c.limiter.inFlight === 0, { what: 'the idle calls to give their tokens back' })
    const again = await neverReading(port)
    Array.from({ length: 5 }, () => rawCall(again, slowService.chat.path, true))
    await waitFor(() => started.chat === 10, { what: 'a new connection to get its 5 places' })
    again.destroy()
    await waitFor(() => c.limiter.inFlight === 0)
    expect(c.limiter.stats().invalidReleases).toBe(0)
    c.limiter.close()
  })
})
