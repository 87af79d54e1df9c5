// A real Redis for the tests: REDIS_URL when set, else a private redis-server on a free loopback port (started
// here, stopped after). With neither, Redis tests are skipped locally, but under CI or BULWARK_REQUIRE_REDIS the
// test file fails at once: a skipped Redis test must never pass for a green run.
import * as net from 'net'

import Redis from 'ioredis'
import { afterAll, beforeAll } from 'vitest'

import { findBinary, ServerProcess } from './server-process'

export interface RedisTarget {
  /** An external server to use as it is. */
  url?: string
  /** A redis-server binary to start private servers with. */
  binary?: string
}

function redisRequired(): boolean {
  return Boolean(process.env.CI) || Boolean(process.env.BULWARK_REQUIRE_REDIS)
}

/**
 * What Redis the tests can use, or undefined to skip them. `needsServer`: the test kills, pauses or restarts the
 * server, so it needs a binary even when REDIS_URL is set.
 */
export function redisTarget(needsServer = false): RedisTarget | undefined {
  const binary = findBinary('redis-server')
  const url = process.env.REDIS_URL || undefined
  const usable = needsServer ? binary !== undefined : binary !== undefined || url !== undefined
  if (!usable) {
    if (redisRequired()) {
      throw new Error(
        `Redis tests are required here (CI or BULWARK_REQUIRE_REDIS is set) but ${needsServer ? 'no redis-server binary' : 'neither REDIS_URL nor a redis-server binary'} was found: ` +
          'install redis-server (Debian: apt-get install -y redis-server) or set REDIS_URL.',
      )
    }
    return undefined
  }
  return { url: needsServer ? undefined : url, binary }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as net.AddressInfo).port
      probe.close(() => resolve(port))
    })
  })
}

/** Resolves once `PING` on the port answers `+PONG` (or `-NOAUTH`: a server with a password is up too). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let answer = ''
    socket.setTimeout(200, () => socket.destroy())
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.on('data', (d) => {
      answer += d.toString()
      if (answer.includes('\r\n')) socket.end()
    })
    socket.once('close', () => resolve(answer.startsWith('+PONG') || answer.startsWith('-NOAUTH')))
    socket.once('error', () => resolve(false))
  })
}

/** A private redis-server: start, kill, restart on the same port (empty: no persistence), pause and resume. */
export class RedisServer extends ServerProcess {
  private constructor(
    binary: string,
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {
    super(binary, 'bulwark-redis-')
  }

  /**
   * A server on `port`, or on a port `choosePort` picks (default: a free one), with `args` added to its command line
   * (`--requirepass x`...; a function of the port when they name it). A picked port is free when picked, but any
   * process may bind it before redis-server does (an outgoing connection takes its local port from the same range):
   * a server that finds its picked port taken starts again on a new pick.
   */
  static async start(
    binary: string,
    options: { port?: number; args?: string[] | ((port: number) => string[]); choosePort?: () => Promise<number> } = {},
  ): Promise<RedisServer> {
    const argsFor = (port: number) => (typeof options.args === 'function' ? options.args(port) : (options.args ?? []))
    for (let attempt = 1; ; attempt++) {
      const port = options.port ?? (await (options.choosePort ?? freePort)())
      const server = new RedisServer(binary, port, argsFor(port))
      try {
        await server.launch()
        return server
      } catch (error) {
        const portTaken = /Address already in use/i.test(String(error))
        if (options.port !== undefined || !portTaken || attempt === 5) throw error
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  launch(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
    ]
    return this.spawnUntil([...args, ...this.extraArgs], () => ping(this.port), 10_000)
  }
}

/** A Redis URL for the tests: REDIS_URL, or a private server (returned, to stop after). */
export async function openRedis(target: RedisTarget): Promise<{ url: string; server?: RedisServer }> {
  if (target.url) return { url: target.url }
  const server = await RedisServer.start(target.binary as string)
  return { url: server.url, server }
}

/**
 * For a describe block: a Redis for its tests (REDIS_URL or a private server), opened before them and closed after,
 * with one connected ioredis client. Read `.redis` inside the tests.
 */
export function useRedis(target: RedisTarget): { redis: Redis; url: string } {
  const state = {} as { redis: Redis; url: string }
  let server: RedisServer | undefined
  beforeAll(async () => {
    const opened = await openRedis(target)
    server = opened.server
    state.url = opened.url
    state.redis = new Redis(opened.url)
    await new Promise((resolve) => state.redis.once('ready', resolve))
  })
  afterAll(async () => {
    state.redis?.disconnect()
    await server?.stop()
  })
  return state
}

/**
 * For a describe block: a Redis for its tests (as useRedis), and `client()`, a fresh connected ioredis client for
 * each caller (decisions made while a client still connects go to insurance), all closed after the block.
 */
export function useRedisClients(target: RedisTarget): { client(): Promise<Redis> } {
  let url = ''
  let server: RedisServer | undefined
  const clients: Redis[] = []
  beforeAll(async () => {
    ;({ url, server } = await openRedis(target))
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => undefined)))
    await server?.stop()
  })
  return {
    async client() {
      const c = new Redis(url)
      clients.push(c)
      await new Promise((resolve) => c.once('ready', resolve))
      return c
    },
  }
}
