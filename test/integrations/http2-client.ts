// A real node:http2 client for the inbound scenarios, and a way to serve an http2 server as a TestServer.
import * as http2 from 'http2'
import type { AddressInfo } from 'net'

import type { Reply, ScenarioClient, TestServer } from './inbound-scenarios'

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
