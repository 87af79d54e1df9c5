// Real clients that read slowly or not at all (no mock of the socket): what an attacker, or a phone on a bad network,
// does to a server behind the inbound guard. HTTP/1.1 over raw sockets here; HTTP/2 in http2-client.ts.
import * as net from 'net'

import type { Reply } from './inbound-scenarios'

const ignore = (): void => undefined

/** One connection (HTTP/1.1: a socket; HTTP/2: a session) that sends requests in batches. */
export interface BatchConnection {
  /** Sends `count` requests for `path` at once (pipelined, or as concurrent streams); resolves with their replies. */
  send(count: number, path?: string): Promise<Reply[]>
  close(): void
}

/** A slow reader: how many bytes of its answer it has read so far. */
export interface SlowReader {
  received(): number
  close(): void
}

/** How the slow-client scenarios talk to a server over one protocol. */
export interface SlowClient {
  /** How many requests, and answers of how many bytes, leave a client that never reads with answers it has not taken. */
  unread: { requests: number; answerBytes: number }
  /** Opens one connection that sends `count` requests for `path` and never reads an answer. */
  neverReads(port: number, path: string, count: number): Promise<{ close(): void }>
  /** Requests `path` and reads the answer at `bytesPerSecond`, in tenths of a second. */
  readsSlowly(port: number, path: string, bytesPerSecond: number): SlowReader
  /** Opens one connection for batches of concurrent requests. */
  connect(port: number): BatchConnection
}

const requestLine = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`

/**
 * Reads HTTP/1.1 replies off `socket` as they come (every answer the scenarios get has a content-length), and hands
 * each to the oldest waiting request.
 */
function replyParser(socket: net.Socket): (count: number) => Promise<Reply[]> {
  let buffered = Buffer.alloc(0)
  const waiting: Array<(reply: Reply) => void> = []
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    for (;;) {
      const headEnd = buffered.indexOf('\r\n\r\n')
      if (headEnd < 0) return
      const lines = buffered.subarray(0, headEnd).toString('latin1').split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      const length = Number(headers['content-length'])
      if (!(length >= 0)) throw new Error(`a reply without content-length: ${lines[0]}`)
      if (buffered.length < headEnd + 4 + length) return
      const body = buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8')
      buffered = buffered.subarray(headEnd + 4 + length)
      waiting.shift()?.({ status: Number(lines[0].split(' ')[1]), headers, body })
    }
  })
  return (count) =>
    Promise.all(Array.from({ length: count }, () => new Promise<Reply>((resolve) => waiting.push(resolve))))
}

export const http1Slow: SlowClient = {
  unread: { requests: 64, answerBytes: 256 * 1024 }, // 16 MiB: more than the kernel's buffers on loopback take
  async neverReads(port, path, count) {
    const socket = net.connect(port, '127.0.0.1').on('error', ignore)
    socket.pause() // nothing reads: the kernel's buffers fill, then the server's writes wait
    socket.write(requestLine(path).repeat(count))
    return { close: () => socket.destroy() }
  },
  readsSlowly(port, path, bytesPerSecond) {
    const socket = net.connect(port, '127.0.0.1').on('error', ignore)
    socket.pause()
    socket.write(requestLine(path))
    let received = 0
    const timer = setInterval(() => {
      const chunk = socket.read(Math.max(1, Math.floor(bytesPerSecond / 10))) as Buffer | null
      if (chunk !== null) received += chunk.length
    }, 100)
    return {
      received: () => received,
      close: () => {
        clearInterval(timer)
        socket.destroy()
      },
    }
  },
  connect(port) {
    const socket = net.connect(port, '127.0.0.1').on('error', ignore)
    const replies = replyParser(socket)
    return {
      send(count, path = '/work') {
        const answered = replies(count)
        socket.write(requestLine(path).repeat(count))
        return answered
      },
      close: () => socket.destroy(),
    }
  },
}
