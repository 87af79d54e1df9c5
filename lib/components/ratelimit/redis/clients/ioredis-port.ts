import { type PortStatus, type RedisPort, once } from './redis-port'

/**
 * The ioredis shape (ioredis 5 and 6, `Redis` and `Cluster`, and iovalkey, its Valkey fork): what the limiter calls.
 * Any object with `evalsha` and `eval` in this form works (a test double, a wrapper around another client).
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  /** ioredis' connection status; when absent the client is taken as always ready. */
  readonly status?: string
}

/** The parts of ioredis used when present: script loading, and a Cluster's masters. */
interface IoredisExtras {
  script?(subcommand: 'LOAD', script: string): Promise<unknown>
  connect?(): Promise<void>
  once?(event: string, listener: () => void): unknown
  readonly isCluster?: boolean
  nodes?(role: 'master'): IoredisExtras[]
}

// Before the first 'ready' ioredis is 'wait' (lazyConnect), 'connecting' or 'connect' (handshake, AUTH).
const STARTING = new Set(['wait', 'connecting', 'connect'])

export class IoredisPort implements RedisPort {
  readonly family = 'ioredis'
  readonly cluster: boolean
  private readonly extras: IoredisExtras

  constructor(private readonly client: RedisScriptClient) {
    this.extras = client as IoredisExtras
    this.cluster = this.extras.isCluster === true
  }

  status(): PortStatus {
    const status = this.client.status
    if (status === undefined || status === 'ready') return 'ready'
    return STARTING.has(status) ? 'starting' : 'down'
  }

  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.evalsha(sha, keys.length, ...keys, ...args)
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.eval(script, keys.length, ...keys, ...args)
  }

  async load(scripts: readonly string[]): Promise<void> {
    const extras = this.extras
    if (typeof extras.script !== 'function') return // a minimal client: NOSCRIPT resends the script when needed
    let targets: IoredisExtras[] = [extras]
    if (this.cluster && typeof extras.nodes === 'function') {
      // A Cluster knows its masters only once connected; a lazy one connects on its first command, so ask it to.
      if (this.client.status === 'wait') extras.connect?.().catch(() => undefined)
      if (this.client.status !== 'ready') await once(extras, 'ready')
      targets = extras.nodes('master')
    }
    // A standalone client queues the commands until it is connected (its offline queue), in order before any EVALSHA.
    await Promise.all(targets.flatMap((node) => scripts.map((script) => node.script?.('LOAD', script))))
  }
}
