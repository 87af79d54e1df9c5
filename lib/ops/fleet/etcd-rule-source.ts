import { createRequire } from 'module'
import * as path from 'path'

import type * as Etcd from 'etcd3'

import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { loadPeer } from '../metrics/load-peer'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import type { RuleSource, SourceDocument } from './rule-source'
import { withTimeout } from './with-timeout'

export interface EtcdRuleSourceOptions {
  /** The application namespace whose document this is. */
  namespace: string
  /** etcd endpoints, `http://host:2379` (or `https://`). */
  hosts: string[]
  /** Prefix of the keys (default '/bulwark/rules/'): the document is `<prefix><namespace>/document`. */
  keyPrefix?: string
  /** etcd's own password authentication, if the cluster uses it. */
  auth?: { username: string; password: string }
  /** Longest a call waits, ms (default 2000). */
  timeout?: number
  /** Ms between attempts to bring back a lost watch (default 250). */
  retryInterval?: number
}

type FaultHandling = NonNullable<Etcd.IOptions['faultHandling']>

/**
 * No breaker that would keep a host away for seconds after etcd is back, no retries (the watcher retries on its own
 * timer), and a lost watch brought back every `retry` ms: built with the copy of cockatiel etcd3 itself loads.
 */
function faultHandling(retry: number): FaultHandling {
  const fromHere = createRequire(__filename)
  const etcdDir = path.dirname(fromHere.resolve('etcd3/package.json'))
  const c = fromHere(fromHere.resolve('cockatiel', { paths: [etcdDir] })) as {
    noop: unknown
    ConstantBackoff: new (ms: number) => unknown
  }
  return { host: () => c.noop, global: c.noop, watchBackoff: new c.ConstantBackoff(retry) } as FaultHandling
}

/**
 * A fleet's rules in etcd v3 (docs/readme/fleet.md): the document is one key, `<prefix><namespace>/document`, its
 * mod revision the source's revision; writes are transactions that compare it first; hosts watch the key, and
 * etcd's watch resumes from the last revision seen after a lost connection, so nothing is missed. Hosts' reports
 * are keys under `<prefix><namespace>/hosts/`.
 */
export class EtcdRuleSource implements RuleSource {
  readonly description: string
  private readonly client: Etcd.Etcd3
  private readonly key: string
  private readonly hostsPrefix: string
  private readonly timeout: number
  private closed = false

  constructor(options: EtcdRuleSourceOptions) {
    const o = checkOptions<EtcdRuleSourceOptions>(options, 'options')
    if (typeof o.namespace !== 'string' || !/^[A-Za-z0-9_-]{1,40}$/.test(o.namespace))
      throw new InvalidOptionError('namespace', o.namespace, 'a namespace of 1-40 characters from A-Z a-z 0-9 _ -')
    if (!Array.isArray(o.hosts) || o.hosts.length === 0 || !o.hosts.every((h) => /^https?:\/\/[^\s]+$/.test(h)))
      throw new InvalidOptionError('hosts', o.hosts, 'etcd endpoints such as http://127.0.0.1:2379')
    const prefix = o.keyPrefix ?? '/bulwark/rules/'
    if (typeof prefix !== 'string' || prefix.length > 200)
      throw new InvalidOptionError('keyPrefix', prefix, 'a string of at most 200 characters')
    this.timeout = optionalNumber('timeout', o.timeout, 2000, { min: 1, max: 60_000 })
    const retry = optionalNumber('retryInterval', o.retryInterval, 250, { min: 10, max: 60_000 })
    this.key = `${prefix}${o.namespace}/document`
    this.hostsPrefix = `${prefix}${o.namespace}/hosts/`
    const { Etcd3 } = loadPeer<typeof Etcd>('etcd3', 'an etcd rule source')
    this.client = new Etcd3({
      hosts: o.hosts,
      auth: o.auth,
      dialTimeout: this.timeout,
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + this.timeout }),
      faultHandling: faultHandling(retry),
      // gRPC's own reconnection waits 1 s, then longer: a host would hear etcd seconds after it is back.
      grpcOptions: { 'grpc.initial_reconnect_backoff_ms': retry, 'grpc.max_reconnect_backoff_ms': retry },
    })
    this.description = `etcd ${o.hosts.join(',')} ${this.key}`
  }

  async read(): Promise<SourceDocument | undefined> {
    const response = await withTimeout(this.client.get(this.key).exec(), this.timeout, 'etcd get')
    const kv = response.kvs[0]
    return kv === undefined ? undefined : { text: kv.value.toString(), revision: Number(kv.mod_revision) }
  }

  watch(listener: (document: SourceDocument) => void, onError: (error: Error) => void): Disposable {
    let stopped = false
    let watcher: Etcd.Watcher | undefined
    const readNow = () =>
      this.read().then(
        (doc) => !stopped && doc !== undefined && listener(doc),
        (error: Error) => !stopped && onError(error),
      )
    this.client
      .watch()
      .key(this.key)
      .create()
      .then(
        (w) => {
          watcher = w
          if (stopped) return void w.cancel().catch(() => undefined)
          w.on('put', (kv) => !stopped && listener({ text: kv.value.toString(), revision: Number(kv.mod_revision) }))
          w.on('disconnected', (error) => !stopped && onError(error))
          w.on('error', (error) => !stopped && onError(error))
          // etcd resumes the watch from the last revision it sent; a read covers the time before the first one.
          w.on('connected', () => void readNow())
          void readNow()
        },
        (error: Error) => !stopped && onError(error),
      )
    return toDisposable(() => {
      stopped = true
      watcher?.cancel().catch(() => undefined)
    })
  }

  async write(text: string, expected: number | undefined): Promise<number | undefined> {
    const txn =
      expected === undefined
        ? this.client.if(this.key, 'Create', '==', 0)
        : this.client.if(this.key, 'Mod', '==', expected)
    const result = await withTimeout(txn.then(this.client.put(this.key).value(text)).commit(), this.timeout, 'etcd txn')
    return result.succeeded ? Number(result.header.revision) : undefined
  }

  async report(host: string, text: string, ttlMs: number): Promise<void> {
    const entry = JSON.stringify({ expires: Date.now() + ttlMs, report: text })
    await withTimeout(
      this.client
        .put(this.hostsPrefix + host)
        .value(entry)
        .exec(),
      this.timeout,
      'etcd put',
    )
  }

  async reports(): Promise<string[]> {
    const all = await withTimeout(this.client.getAll().prefix(this.hostsPrefix).strings(), this.timeout, 'etcd get')
    const now = Date.now()
    const live: string[] = []
    for (const [key, raw] of Object.entries(all)) {
      try {
        const { expires, report } = JSON.parse(raw) as { expires: number; report: string }
        if (expires > now) live.push(report)
        else if (expires < now - 3_600_000) await this.client.delete().key(key).exec() // gone for an hour
      } catch {
        await this.client.delete().key(key).exec()
      }
    }
    return live
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.client.close()
  }
}
