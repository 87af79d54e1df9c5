import type { Disposable } from '../../foundation/common/disposable'

/** A document as a source holds it: its text (JSON) and the source's revision of it (grows with every write). */
export interface SourceDocument {
  text: string
  revision: number
}

/**
 * Where a fleet's rules live (docs/readme/fleet.md, "Writing an adapter"): one document per application namespace,
 * read whole, watched, and (for `bulwark set --source`) replaced when nobody else wrote meanwhile. Redis, etcd and
 * a file come with bulwark; any store with a watch and a compare-and-set can be one in a page of code.
 *
 * Every method must settle within a bounded time (give your client a timeout): the host's watcher retries on its
 * own schedule and never waits for a source.
 */
export interface RuleSource {
  /** What `bulwark top` and `bulwark rules status` show: the source's address without credentials. */
  readonly description: string
  /** The document now, or undefined when nothing was ever written. */
  read(): Promise<SourceDocument | undefined>
  /**
   * Tells `listener` of new documents (at least the newest of a burst; a repeat is harmless) until disposed. A lost
   * connection goes to `onError`; the source reconnects by itself and then reads again, so that a watcher that missed
   * a change catches up.
   */
  watch(listener: (document: SourceDocument) => void, onError: (error: Error) => void): Disposable
  /**
   * Replaces the document if its revision is still `expected` (undefined: if there is none yet). Resolves with the
   * new revision, or undefined when another writer came first. Absent for a source hosts only read.
   */
  write?(text: string, expected: number | undefined): Promise<number | undefined>
  /** Keeps a host's report (JSON) for `ttlMs`; absent for a source hosts cannot write to. */
  report?(host: string, text: string, ttlMs: number): Promise<void>
  /** The hosts' reports that have not expired. */
  reports?(): Promise<string[]>
  /** Closes connections. Idempotent. */
  close(): Promise<void>
}
