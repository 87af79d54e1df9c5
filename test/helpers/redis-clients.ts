// Every Redis and Valkey client RedisRateLimiter accepts, made the way their users make them, against a standalone
// server and against a cluster. Each factory returns the client and a function that closes it.
import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide'
import Redis6 from 'ioredis'
import Redis5 from 'ioredis-v5'
import Valkey from 'iovalkey'
import { createClient as createClient6, createCluster as createCluster6 } from 'redis'
import { createClient as createClient5, createCluster as createCluster5 } from 'redis-v5'

import type { RedisClient } from '../../lib/components/ratelimit/redis/redis-options'

export interface Made {
  client: RedisClient
  close: () => Promise<void>
}

type Node = { host: string; port: number }

export interface ClientFamily {
  name: string
  /** A connected client of one server. */
  standalone(node: Node): Promise<Made>
  /** A cluster client; `connected` false: returned at once, still connecting (a cold start). */
  cluster(nodes: Node[], connected?: boolean): Promise<Made>
}

function onceReady(emitter: { once(event: 'ready', listener: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => emitter.once('ready', () => resolve()))
}

// The three share one API (iovalkey and ioredis 5 are typed as ioredis 6 here).
function ioredisFamily(name: string, Redis: typeof Redis6): ClientFamily {
  return {
    name,
    async standalone(node) {
      const client = new Redis(node.port, node.host)
      await onceReady(client)
      return { client, close: async () => void client.disconnect() }
    },
    async cluster(nodes, connected = true) {
      const client = new Redis.Cluster(nodes)
      if (connected) await onceReady(client)
      return { client, close: async () => void client.disconnect() }
    },
  }
}

// node-redis 5 is typed as node-redis 6 here: the calls made are the same.
function nodeRedisFamily(
  name: string,
  createClient: typeof createClient6,
  createCluster: typeof createCluster6,
): ClientFamily {
  return {
    name,
    async standalone(node) {
      const client = createClient({ socket: node })
      client.on('error', () => undefined) // reconnections are the limiter's business here
      await client.connect()
      return { client, close: async () => void client.destroy() }
    },
    async cluster(nodes, connected = true) {
      const client = createCluster({ rootNodes: nodes.map((socket) => ({ socket })) })
      client.on('error', () => undefined)
      const connecting = client.connect()
      if (connected) await connecting
      else connecting.catch(() => undefined)
      return { client, close: async () => void client.destroy() }
    },
  }
}

// GLIDE's core logs reconnections and NOSCRIPT retries as warnings: the tests provoke them on purpose.
Logger.setLoggerConfig('error')

const glide: ClientFamily = {
  name: 'valkey-glide 2',
  async standalone(node) {
    const client = await GlideClient.createClient({ addresses: [node], requestTimeout: 2000 })
    return { client, close: async () => client.close() }
  },
  async cluster(nodes) {
    // A GLIDE client exists only once connected: there is no cold client to hand over.
    const client = await GlideClusterClient.createClient({ addresses: nodes, requestTimeout: 2000 })
    return { client, close: async () => client.close() }
  },
}

export const CLIENT_FAMILIES: ClientFamily[] = [
  ioredisFamily('ioredis 6', Redis6),
  ioredisFamily('ioredis 5', Redis5 as unknown as typeof Redis6),
  ioredisFamily('iovalkey', Valkey as unknown as typeof Redis6),
  nodeRedisFamily('node-redis 6', createClient6, createCluster6),
  nodeRedisFamily(
    'node-redis 5',
    createClient5 as unknown as typeof createClient6,
    createCluster5 as unknown as typeof createCluster6,
  ),
  glide,
]
