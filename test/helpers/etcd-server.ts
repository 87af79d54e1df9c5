// A real etcd for the tests: a private etcd server (Debian's etcd-server) on free loopback ports, started here and
// stopped after; its data directory survives a kill, so a restart comes back with what was written. Without the
// binary, etcd tests are skipped locally, but under CI or BULWARK_REQUIRE_ETCD the test file fails at once: a
// skipped etcd test must never pass for a green run.
import * as http from 'http'
import * as path from 'path'

import { freePort } from './redis-server'
import { findBinary, ServerProcess } from './server-process'

/** The etcd binary, or undefined to skip (an error under CI). */
export function etcdTarget(): string | undefined {
  const binary = findBinary('etcd')
  if (
    binary === undefined &&
    (process.env.CI || process.env.BULWARK_REQUIRE_ETCD || process.env.BULWARK_REQUIRE_REDIS)
  ) {
    throw new Error('etcd tests are required here but no etcd binary was found: apt-get install -y etcd-server')
  }
  return binary
}

/** Resolves true once etcd's /health says it is healthy. */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health', timeout: 500 }, (response) => {
      let body = ''
      response.on('data', (d) => (body += d))
      response.on('end', () => resolve(body.includes('"health":"true"')))
    })
    request.on('timeout', () => request.destroy())
    request.on('error', () => resolve(false))
  })
}

/** A private single-member etcd: start, kill, restart (same ports and data), pause (SIGSTOP) and resume. */
export class EtcdServer extends ServerProcess {
  private constructor(
    binary: string,
    readonly port: number,
    readonly peerPort: number,
  ) {
    super(binary, 'bulwark-etcd-')
  }

  static async start(binary: string): Promise<EtcdServer> {
    for (let attempt = 1; ; attempt++) {
      const server = new EtcdServer(binary, await freePort(), await freePort())
      try {
        await server.launch()
        return server
      } catch (error) {
        await server.stop()
        if (attempt === 5 || !/address already in use/i.test(String(error))) throw error
      }
    }
  }

  /** The address hosts follow: `etcd://127.0.0.1:<port>`. */
  get url(): string {
    return `etcd://127.0.0.1:${this.port}`
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`
  }

  launch(): Promise<void> {
    const client = `http://127.0.0.1:${this.port}`
    const peer = `http://127.0.0.1:${this.peerPort}`
    const args = ['--name', 'test', '--data-dir', path.join(this.dir, 'data'), '--listen-client-urls', client]
    args.push('--advertise-client-urls', client, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer)
    args.push('--initial-cluster', `test=${peer}`, '--log-level', 'error')
    return this.spawnUntil(args, () => healthy(this.port), 20_000)
  }
}
