import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { loadPeer } from '../metrics/load-peer'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import type { RuleSource, SourceDocument } from './rule-source'
import { withTimeout } from './with-timeout'

/** The part of an ioredis (5, 6) or iovalkey client, `Redis` or `Cluster`, that the source uses. */
export interface RuleRedisClient {
  hmget(key: string, ...fields: string[]): Promise<Array<string | null>>
  hset(key: string, ...args: string[]): Promise<unknown>
  hgetall(key: string): Promise<Record<string, string>>
  hdel(key: string, ...fields: string[]): Promise<unknown>
  eval(script: string, keys: number, ...args: string[]): Promise<unknown>
  readonly status: string
  once(event: string, listener: (...args: unknown[]) => void): unknown
  off(event: string, listener: (...args: unknown[]) => void): unknown
  subscribe(channel: string): Promise<unknown>
  duplicate(): RuleRedisClient
  on(event: string, listener: (...args: unknown[]) => void): unknown
  disconnect(): void
}

export interface RedisRuleSourceOptions {
  /** The application namespace whose document this is. */
  namespace: string
  /** `redis://[user:password@]host:port[/db]` or `rediss://...`: the source connects with ioredis (or iovalkey). */
  url?: string
  /** Nodes of a Redis Cluster to start from (instead of `url`). */
  cluster?: Array<{ host: string; port: number }>
  /** An ioredis or iovalkey client of yours (instead of `url`): the source duplicates it for the channel, closes only its own. */
  client?: RuleRedisClient
  /** Prefix of the keys and channel (default 'bulwark:rules:'). */
  keyPrefix?: string
  /** Longest a command waits, ms (default 2000). */
  timeout?: number
}

// Replaces the document only if its version is still the expected one, and tells the channel: atomic, one slot
// (every key of a namespace has the namespace as its hash tag).
const WRITE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'version')
if current == false then current = '' end
if current ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'version', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return tonumber(ARGV[3])`

interface RedisModule {
  new (url: string, options: object): RuleRedisClient
  Cluster: new (nodes: Array<{ host: string; port: number }>, options: object) => RuleRedisClient
}

/** Loads ioredis, or iovalkey when only it is installed. */
function redisModule(): RedisModule {
  try {
    return loadPeer<RedisModule>('ioredis', 'a Redis rule source')
  } catch (error) {
    try {
      return loadPeer<RedisModule>('iovalkey', 'a Redis rule source')
    } catch {
      throw error
    }
  }
}

/**
 * A fleet's rules in Redis or Valkey (docs/readme/fleet.md): a hash per application, `<prefix>{<namespace>}`, with
 * the document and its version, replaced by a script that checks the version first; a channel,
 * `<prefix>{<namespace>}:changed`, told each new version. A host that missed a message reads the hash again when its
 * subscription comes back, and its watcher reads it on a timer too: nothing depends on a message arriving.
 */
export class RedisRuleSource implements RuleSource {
  readonly description: string
  private readonly client: RuleRedisClient
  private readonly own: boolean
  private readonly key: string
  private readonly hostsKey: string
  private readonly channel: string
  private readonly timeout: number
  private subscribers: RuleRedisClient[] = []
  private closed = false

  constructor(options: RedisRuleSourceOptions) {
    const o = checkOptions<RedisRuleSourceOptions>(options, 'options')
    const prefix = o.keyPrefix ?? 'bulwark:rules:'
    if (typeof prefix !== 'string' || /[{}]/.test(prefix) || prefix.length > 100)
      throw new InvalidOptionError('keyPrefix', prefix, 'a string of at most 100 characters without { or }')
    if (typeof o.namespace !== 'string' || !/^[A-Za-z0-9_-]{1,40}$/.test(o.namespace))
      throw new InvalidOptionError('namespace', o.namespace, 'a namespace of 1-40 characters from A-Z a-z 0-9 _ -')
    this.timeout = optionalNumber('timeout', o.timeout, 2000, { min: 1, max: 60_000 })
    this.key = `${prefix}{${o.namespace}}`
    this.hostsKey = `${this.key}:hosts`
    this.channel = `${this.key}:changed`
    const given = [o.url, o.cluster, o.client].filter((x) => x !== undefined).length
    if (given !== 1) throw new InvalidOptionError('url', o.url, 'exactly one of url, cluster and client')
    this.own = o.client === undefined
    if (o.client !== undefined) {
      this.client = o.client
      this.description = `redis (your client) ${this.key}`
    } else {
      const Redis = redisModule()
      // Commands fail at once while disconnected (the watcher retries on its own timer); reconnect soon.
      const common = { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: this.timeout }
      const retryStrategy = (times: number) => Math.min(50 * times, 250)
      if (o.cluster !== undefined) {
        this.client = new Redis.Cluster(o.cluster, {
          enableOfflineQueue: false,
          clusterRetryStrategy: retryStrategy,
          redisOptions: { ...common, retryStrategy },
        })
        this.description = `redis cluster ${o.cluster.map((n) => `${n.host}:${n.port}`).join(',')} ${this.key}`
      } else {
        this.client = new Redis(String(o.url), { ...common, retryStrategy })
        this.description = `${withoutCredentials(String(o.url))} ${this.key}`
      }
      this.client.on('error', () => undefined) // reported through the calls that fail
    }
  }

  /** Resolves once the client is connected (commands are not queued while it is not), within the timeout. */
  private ready(): Promise<void> {
    const client = this.client
    if (client.status === 'ready') return Promise.resolve()
    let listener = () => undefined as void
    const connected = new Promise<void>((resolve) => {
      listener = () => resolve()
      client.once('ready', listener)
    })
    return withTimeout(connected, this.timeout, `connecting to ${this.description}`).finally(() =>
      client.off('ready', listener),
    )
  }

  async read(): Promise<SourceDocument | undefined> {
    await this.ready()
    const [version, text] = await withTimeout(this.client.hmget(this.key, 'version', 'doc'), this.timeout, 'HMGET')
    if (version === null || text === null) return undefined
    return { text, revision: Number(version) }
  }

  watch(listener: (document: SourceDocument) => void, onError: (error: Error) => void): Disposable {
    const subscriber = this.client.duplicate()
    this.subscribers.push(subscriber)
    let stopped = false
    const readNow = () => {
      if (stopped) return
      this.read().then(
        (doc) => {
          if (!stopped && doc !== undefined) listener(doc)
        },
        (error: Error) => !stopped && onError(error),
      )
    }
    subscriber.on('error', (error) => !stopped && onError(error as Error))
    subscriber.on('message', (channel) => channel === this.channel && readNow())
    // Subscribed once connected (commands are not queued while disconnected), and again after every reconnection:
    // then read, for what was missed meanwhile.
    subscriber.on('ready', () => {
      if (!stopped) subscriber.subscribe(this.channel).then(readNow, (error: Error) => !stopped && onError(error))
    })
    return toDisposable(() => {
      stopped = true
      this.subscribers = this.subscribers.filter((s) => s !== subscriber)
      subscriber.disconnect()
    })
  }

  async write(text: string, expected: number | undefined): Promise<number | undefined> {
    await this.ready()
    const next = String((expected ?? 0) + 1)
    const args = [expected === undefined ? '' : String(expected), text, next, this.channel]
    const result = await withTimeout(this.client.eval(WRITE_SCRIPT, 1, this.key, ...args), this.timeout, 'EVAL')
    return result === null || result === undefined ? undefined : Number(result)
  }

  async report(host: string, text: string, ttlMs: number): Promise<void> {
    const entry = JSON.stringify({ expires: Date.now() + ttlMs, report: text })
    await this.ready()
    await withTimeout(this.client.hset(this.hostsKey, host, entry), this.timeout, 'HSET')
  }

  async reports(): Promise<string[]> {
    await this.ready()
    const all = await withTimeout(this.client.hgetall(this.hostsKey), this.timeout, 'HGETALL')
    const now = Date.now()
    const live: string[] = []
    const expired: string[] = []
    for (const [host, raw] of Object.entries(all)) {
      try {
        const { expires, report } = JSON.parse(raw) as { expires: number; report: string }
        if (expires > now) live.push(report)
        else if (expires < now - 3_600_000) expired.push(host) // gone for an hour: not worth keeping
      } catch {
        expired.push(host)
      }
    }
    if (expired.length > 0) await withTimeout(this.client.hdel(this.hostsKey, ...expired), this.timeout, 'HDEL')
    return live
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const subscriber of this.subscribers.splice(0)) subscriber.disconnect()
    if (this.own) this.client.disconnect()
  }
}

/** A URL as shown: its password left out. */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//')
}
