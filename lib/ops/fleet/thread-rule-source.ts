import { Worker } from 'worker_threads'

import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { withoutCredentials } from './redis-rule-source'
import type { RuleSource, SourceDocument } from './rule-source'
import type { SourceMessage, SourceRequest } from './source-thread'
import { withTimeout } from './with-timeout'

/**
 * The thread's code: the built 'bulwark/fleet' entry, which serves a source when loaded in a thread made here
 * (source-thread.ts). Undefined when it cannot be resolved (bulwark copied without its package.json).
 */
let threadEntry: string | null | undefined
function resolveThreadEntry(): string | undefined {
  if (threadEntry === undefined) {
    try {
      threadEntry = require.resolve('bulwark/fleet')
    } catch {
      threadEntry = null
    }
  }
  return threadEntry ?? undefined
}

/** Longest the watcher waits for the thread's answer (the source inside has its own, shorter, timeout). */
const ANSWER_TIMEOUT = 10_000

type Request = SourceRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never

/**
 * A source a URL names, kept in a worker thread of its own (docs/readme/fleet.md, "One watcher per host"): its
 * connections and its documents' parsing stay off the application's event loop, and the thread is unref'd, so a
 * process that has nothing else to do ends even while its watcher holds a connection to Redis or etcd.
 */
export class ThreadRuleSource implements RuleSource {
  readonly description: string
  private readonly worker: Worker
  private nextId = 1
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>()
  private listeners: Array<{ listener: (d: SourceDocument) => void; onError: (e: Error) => void }> = []
  private watching = false
  private closed = false
  private ended = false

  constructor(url: string, namespace: string) {
    this.description = `${withoutCredentials(url.split('?')[0])} (${namespace})`
    this.worker = new Worker(resolveThreadEntry() ?? '', { workerData: { bulwarkRuleSource: true, url, namespace } })
    this.worker.on('message', (m: SourceMessage) => this.receive(m))
    this.worker.on('error', (error) => this.fail(error))
    this.worker.on('exit', () => {
      this.ended = true
      this.fail(new Error('the source thread ended'))
    })
    this.worker.unref() // after the listeners: a 'message' listener refs the port again
  }

  /** The thread ended (it failed): the watcher opens another. */
  get dead(): boolean {
    return this.ended && !this.closed
  }

  /** Whether sources can run in a thread here (the package's 'bulwark/fleet' entry resolves). */
  static available(): boolean {
    return resolveThreadEntry() !== undefined
  }

  read(): Promise<SourceDocument | undefined> {
    return this.ask({ op: 'read' }) as Promise<SourceDocument | undefined>
  }

  watch(listener: (document: SourceDocument) => void, onError: (error: Error) => void): Disposable {
    const entry = { listener, onError }
    this.listeners.push(entry)
    if (!this.watching) {
      this.watching = true
      this.ask({ op: 'watch' }).catch((error: Error) => onError(error))
    }
    return toDisposable(() => (this.listeners = this.listeners.filter((l) => l !== entry)))
  }

  async report(host: string, text: string, ttlMs: number): Promise<void> {
    await this.ask({ op: 'report', host, text, ttl: ttlMs })
  }

  reports(): Promise<string[]> {
    return this.ask({ op: 'reports' }) as Promise<string[]>
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.ask({ op: 'close' }).catch(() => undefined)
    await this.worker.terminate()
  }

  private ask(request: Request): Promise<unknown> {
    if (this.closed && request.op !== 'close') return Promise.reject(new Error('the source is closed'))
    const id = this.nextId++
    const answered = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }))
    this.worker.postMessage({ ...request, id })
    return withTimeout(answered, ANSWER_TIMEOUT, `the source thread's answer`).finally(() => this.pending.delete(id))
  }

  private receive(m: SourceMessage): void {
    if ('event' in m) {
      for (const { listener, onError } of this.listeners) {
        if (m.event === 'document') listener({ text: m.text, revision: m.revision })
        else onError(new Error(m.message))
      }
      return
    }
    const waiter = this.pending.get(m.id)
    if (waiter === undefined) return
    if (m.ok) waiter.resolve(m.value)
    else waiter.reject(new Error(m.message))
  }

  private fail(error: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(error)
    this.pending.clear()
    if (!this.closed) for (const { onError } of this.listeners) onError(error)
  }
}
