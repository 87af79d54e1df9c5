// A real local Redis Cluster for the tests: 3 masters with a replica each (by default), made the way operators make
// one, with `redis-cli --cluster create`. Started here on free loopback ports and stopped after.
import { execFile } from 'child_process'
import * as fs from 'fs'
import * as net from 'net'
import * as path from 'path'
import { promisify } from 'util'

import Redis from 'ioredis'

import { RedisServer, freePort, redisTarget } from './redis-server'
import { waitFor } from './wait-for'

const run = promisify(execFile)

/** The redis-server and redis-cli binaries a cluster needs, or undefined to skip (an error under CI). */
export function clusterTarget(): { server: string; cli: string } | undefined {
  const target = redisTarget(true)
  if (!target) return undefined
  const cli = path.join(path.dirname(target.binary as string), 'redis-cli')
  if (!fs.existsSync(cli)) {
    if (process.env.CI || process.env.BULWARK_REQUIRE_REDIS) {
      throw new Error(
        `Redis Cluster tests need redis-cli next to ${target.binary} (Debian: apt-get install redis-tools)`,
      )
    }
    return undefined
  }
  return { server: target.binary as string, cli }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

/** A free port whose cluster bus port (port + 10 000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort()
    if (port + 10_000 > 65_535 || taken.has(port) || !(await portFree(port + 10_000))) continue
    taken.add(port)
    return port
  }
}

/** Waits for `check` to give a value, as waitFor does; a check that throws (a node not up yet) counts as not yet. */
export async function poll<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const found = await waitFor(
    async () => {
      try {
        const value = await check()
        return value === undefined ? undefined : { value }
      } catch {
        return undefined
      }
    },
    { what, timeout: ms, interval: 50 },
  )
  return found.value
}

/** One CLUSTER NODES line: id, port, role (master or slave), the master it replicates, whether it is failed. */
interface NodeLine {
  id: string
  port: number
  master: boolean
  masterId: string
  failed: boolean
  slots: string[]
}

function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const f = line.split(' ')
      return {
        id: f[0],
        port: Number(f[1].split('@')[0].split(':').pop()),
        master: f[2].includes('master'),
        masterId: f[3],
        failed: f[2].includes('fail') && !f[2].includes('fail?'),
        slots: f.slice(8),
      }
    })
}

/** Runs one command on one node with a short-lived connection. */
async function ask(port: number, ...args: string[]): Promise<string> {
  const c = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
  c.on('error', () => undefined)
  try {
    await c.connect()
    return String(await c.call(args[0], ...args.slice(1)))
  } finally {
    c.disconnect()
  }
}

export class RedisCluster {
  /** The masters as created, before any failover. */
  private initial = new Set<number>()
  private readonly dead = new Set<number>()

  private constructor(
    readonly servers: RedisServer[],
    private readonly cli: string,
    private readonly masterCount: number,
    private readonly replicaCount: number,
  ) {}

  /** `masters` masters with `replicas` replicas each; `nodeTimeout` (ms) sets how soon a dead master fails over. */
  static async start(
    binaries: { server: string; cli: string },
    options: { masters?: number; replicas?: number; nodeTimeout?: number } = {},
  ): Promise<RedisCluster> {
    const masters = options.masters ?? 3
    const replicas = options.replicas ?? 1
    const taken = new Set<number>()
    const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(options.nodeTimeout ?? 1000)]
    const servers = await Promise.all(
      Array.from({ length: masters * (1 + replicas) }, () =>
        RedisServer.start(binaries.server, {
          choosePort: () => clusterPort(taken),
          args: (port) => [...args, '--cluster-config-file', `nodes-${port}.conf`],
        }),
      ),
    )
    const ports = servers.map((server) => server.port)
    const cluster = new RedisCluster(servers, binaries.cli, masters, replicas)
    try {
      await run(binaries.cli, [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ])
      await cluster.waitUntilHealthy()
      cluster.initial = new Set(await cluster.masterPorts())
    } catch (error) {
      await cluster.stop()
      throw error
    }
    return cluster
  }

  get startupNodes(): Array<{ host: string; port: number }> {
    return this.servers.map((s) => ({ host: '127.0.0.1', port: s.port }))
  }

  /** The servers alive now. */
  private alive(): RedisServer[] {
    return this.servers.filter((s) => !this.dead.has(s.port))
  }

  /** The cluster as a live node sees it. */
  async nodes(): Promise<NodeLine[]> {
    return parseNodes(await ask(this.alive()[0].port, 'CLUSTER', 'NODES'))
  }

  /** Ports of the masters that serve slots now. */
  async masterPorts(): Promise<number[]> {
    return (await this.nodes()).filter((n) => n.master && !n.failed && n.slots.length > 0).map((n) => n.port)
  }

  /** The port of the master serving `key`. */
  async masterOf(key: string): Promise<number> {
    const slot = Number(await ask(this.alive()[0].port, 'CLUSTER', 'KEYSLOT', key))
    const line = (await this.nodes()).find(
      (n) =>
        n.master &&
        !n.failed &&
        n.slots.some((range) => {
          const [from, to] = range.split('-').map(Number)
          return slot >= from && slot <= (to ?? from)
        }),
    )
    if (!line) throw new Error(`no live master serves slot ${slot}`)
    return line.port
  }

  /** Every node says cluster_state:ok, every master serves slots and has its replicas attached and in sync. */
  async waitUntilHealthy(): Promise<void> {
    await poll('a healthy cluster', async () => {
      for (const s of this.alive()) {
        if (!(await ask(s.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return undefined
      }
      const nodes = (await this.nodes()).filter((n) => !n.failed)
      const live = nodes.filter((n) => n.master && n.slots.length > 0)
      if (live.length !== this.masterCount) return undefined
      for (const m of live) {
        const followers = nodes.filter((n) => !n.master && n.masterId === m.id)
        if (followers.length < this.replicaCount) return undefined
        for (const f of followers) {
          if (!(await ask(f.port, 'INFO', 'replication')).includes('master_link_status:up')) return undefined
        }
      }
      return true
    })
  }

  /** Kills the master on `port` (SIGKILL); its replica is promoted after the node timeout. */
  async kill(port: number): Promise<void> {
    const server = this.servers.find((s) => s.port === port)
    if (!server) throw new Error(`no node on port ${port}`)
    this.dead.add(port)
    await server.kill()
  }

  /** Starts the killed nodes again: each rejoins as a replica of the master that took its slots. */
  async reviveAll(): Promise<void> {
    if (this.dead.size === 0) return
    for (const server of this.servers.filter((s) => this.dead.has(s.port))) await server.launch()
    this.dead.clear()
    await this.waitUntilHealthy()
    this.initial = new Set(await this.masterPorts())
  }

  /** Waits until a replica serves the slots of the killed master and every live node says the cluster is ok. */
  async waitForFailover(): Promise<number> {
    return poll('a replica to be promoted', async () => {
      for (const s of this.alive()) {
        if (!(await ask(s.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return undefined
      }
      const served = (await this.masterPorts()).filter((p) => !this.dead.has(p))
      const promoted = served.find((p) => !this.initial.has(p))
      return served.length === this.masterCount ? promoted : undefined
    })
  }

  /** A CLI call on the first live node (`--cluster check`, ...). */
  async cliCall(...args: string[]): Promise<string> {
    return (await run(this.cli, ['-p', String(this.alive()[0].port), ...args])).stdout
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()))
  }
}
