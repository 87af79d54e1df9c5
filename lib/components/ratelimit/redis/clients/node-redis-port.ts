import { type PortStatus, type RedisPort, once } from './redis-port'

/** What node-redis takes with a script call: its keys and arguments. */
export interface NodeRedisScriptOptions {
  keys: string[]
  arguments: string[]
}

/** The parts of the official `redis` client (node-redis 5 and 6: `createClient` and `createCluster`) used here. */
export interface NodeRedisClient {
  evalSha(sha: string, options: NodeRedisScriptOptions): Promise<unknown>
  eval(script: string, options: NodeRedisScriptOptions): Promise<unknown>
  readonly isOpen: boolean
  /** node-redis 6 clusters and every node-redis client; node-redis 5 clusters have only isOpen. */
  readonly isReady?: boolean
  scriptLoad?(script: string): Promise<unknown>
  /** A cluster's primaries, and the client that talks to one. */
  readonly masters?: unknown[]
  nodeClient?(node: unknown): NodeRedisClient | Promise<NodeRedisClient>
}

export function isNodeRedis(client: object): client is NodeRedisClient {
  const c = client as Partial<NodeRedisClient>
  return typeof c.evalSha === 'function' && typeof c.eval === 'function' && typeof c.isOpen === 'boolean'
}

export class NodeRedisPort implements RedisPort {
  readonly family = 'node-redis'
  readonly cluster: boolean

  constructor(private readonly client: NodeRedisClient) {
    this.cluster = Array.isArray(client.masters) && typeof client.nodeClient === 'function'
  }

  status(): PortStatus {
    const c = this.client
    if (!c.isOpen) return 'down' // not connected by its owner yet, or closed: commands would be refused
    const ready = c.isReady ?? (c.masters as unknown[]).length > 0
    return ready ? 'ready' : 'starting'
  }

  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.evalSha(sha, { keys, arguments: args })
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.eval(script, { keys, arguments: args })
  }

  async load(scripts: readonly string[]): Promise<void> {
    const c = this.client
    if (!this.cluster) {
      // Queued by the client while it connects, ahead of any EVALSHA.
      await Promise.all(scripts.map((script) => c.scriptLoad?.(script)))
      return
    }
    if (this.status() !== 'ready') await once(c, 'connect') // the cluster has discovered its shards
    const nodes = await Promise.all((c.masters as unknown[]).map((master) => c.nodeClient?.(master)))
    await Promise.all(nodes.flatMap((node) => scripts.map((script) => node?.scriptLoad?.(script))))
  }
}
