// A real node:http2 client for the inbound scenarios, and a way to serve an http2 server as a TestServer.
import * as http2 from 'http2'
import type { AddressInfo } from 'net'

import type { Reply, ScenarioClient, TestServer } from './inbound-scenarios'
import type { SlowClient } from './slow-clients'

const ignore = (): void => undefined

/** One request on `session`: its status, headers and body. */
export function request(
  session: http2.ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':method': method, ...headers })
    let status = 0
    let responseHeaders: http2.IncomingHttpHeaders = {}
    let body = ''
    stream.setEncoding('utf8')
    stream.on('response', (h) => {
      status = Number(h[':status'])
      responseHeaders = h
    })
    stream.on('data', (chunk: string) => (body += chunk))
    stream.on('end', () => resolve({ status, headers: responseHeaders, body }))
    stream.on('error', reject)
  })
}

export function connect(port: number): http2.ClientHttp2Session {
  const session = http2.connect(`http://127.0.0.1:${port}`)
  session.on('error', ignore)
  return session
}

/** An HTTP/2 session with these settings, once the server's own settings arrived (its stream limit is known). */
async function session2(port: number, settings: http2.Settings = {}): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(`http://127.0.0.1:${port}`, { settings }).on('error', ignore)
  await new Promise((resolve) => session.once('remoteSettings', resolve))
  return session
}

export const http2Slow: SlowClient = {
  // With a window of 0 any answer waits; 100 streams, the guard's default bound for one session.
  unread: { requests: 100, answerBytes: 1024 },
  async neverReads(port, path, count) {
    // A window of 0: the server may send headers, never a byte of a body (RFC 9113, section 6.9.2).
    const session = await session2(port, { initialWindowSize: 0 })
    for (let i = 0; i < count; i++) session.request({ ':path': path }).on('error', ignore)
    return { close: () => session.destroy() }
  },
  readsSlowly(port, path, bytesPerSecond) {
    let received = 0
    let timer: ReturnType<typeof setInterval> | undefined
    let session: http2.ClientHttp2Session | undefined
    let closed = false
    // A small window that grows only as this client reads: the server sends what it is allowed, then waits.
    void session2(port, { initialWindowSize: 1024 }).then((s) => {
      session = s
      if (closed) return s.destroy()
      const stream = s.request({ ':path': path }).on('error', ignore)
      stream.pause()
      timer = setInterval(() => {
        const chunk = stream.read(Math.max(1, Math.floor(bytesPerSecond / 10))) as Buffer | null
        if (chunk !== null) received += chunk.length
      }, 100)
    })
    return {
      received: () => received,
      close: () => {
        closed = true
        clearInterval(timer)
        session?.destroy()
      },
    }
  },
  connect(port) {
    const opened = session2(port)
    return {
      async send(count, path = '/work') {
        const session = await opened
        return Promise.all(Array.from({ length: count }, () => request(session, path)))
      },
      close: () => void opened.then((s) => s.destroy()),
    }
  },
}

/** HTTP/2: a session per request; an abort resets the stream (RST_STREAM CANCEL), as a browser does. */
export const http2Client: ScenarioClient = {
  async get(port, headers = {}, path = '/work') {
    const session = connect(port)
    try {
      return await request(session, path, headers)
    } finally {
      session.close()
    }
  },
  start(port, path) {
    const session = connect(port)
    const stream = session.request({ ':path': path })
    stream.on('error', ignore)
    return {
      abort: () => {
        stream.close(http2.constants.NGHTTP2_CANCEL)
        session.close()
      },
    }
  },
  pipelining: false,
  slow: http2Slow,
}

/** A listening http2 server as a TestServer; closing it destroys its sessions. Its sessions are kept in `sessions`. */
export async function serving2(server: http2.Http2Server): Promise<TestServer & { sessions: Set<http2.Http2Session> }> {
  const sessions = new Set<http2.Http2Session>()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as AddressInfo).port,
    sessions,
    close: () =>
      new Promise((r) => {
        server.close(() => r())
        for (const session of sessions) session.destroy()
      }),
  }
}
