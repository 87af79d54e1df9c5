// A rule source in this process's memory (docs/readme/fleet.md, "Writing an adapter", is the same interface): the
// fleet tests drive the watcher with it, and take it down to see what a host does without its source.
import { type Disposable, toDisposable } from '../../lib/foundation/common/disposable'
import type { RuleSource, SourceDocument } from '../../lib/ops/fleet/rule-source'

export class MemoryRuleSource implements RuleSource {
  readonly description = 'memory'
  text: string | undefined
  revision = 0
  /** While true, every call fails and watchers are told so, as with a source that does not answer. */
  down = false
  readonly reportsKept = new Map<string, string>()
  private listeners: Array<{ listener: (d: SourceDocument) => void; onError: (e: Error) => void }> = []

  async read(): Promise<SourceDocument | undefined> {
    if (this.down) throw new Error('the source does not answer')
    return this.text === undefined ? undefined : { text: this.text, revision: this.revision }
  }

  watch(listener: (d: SourceDocument) => void, onError: (e: Error) => void): Disposable {
    const entry = { listener, onError }
    this.listeners.push(entry)
    if (this.down) onError(new Error('the source does not answer'))
    else if (this.text !== undefined) listener({ text: this.text, revision: this.revision })
    return toDisposable(() => (this.listeners = this.listeners.filter((l) => l !== entry)))
  }

  async write(text: string, expected: number | undefined): Promise<number | undefined> {
    if (this.down) throw new Error('the source does not answer')
    if ((this.text === undefined ? undefined : this.revision) !== expected) return undefined
    this.put(text)
    return this.revision
  }

  /** Replaces the document as any writer (a person with the store's own tools) could, and tells the watchers. */
  put(text: string): void {
    this.text = text
    this.revision++
    for (const { listener } of this.listeners) listener({ text, revision: this.revision })
  }

  setDown(down: boolean): void {
    this.down = down
    for (const { listener, onError } of this.listeners) {
      if (down) onError(new Error('the source does not answer'))
      else if (this.text !== undefined) listener({ text: this.text, revision: this.revision })
    }
  }

  async report(host: string, text: string): Promise<void> {
    if (this.down) throw new Error('the source does not answer')
    this.reportsKept.set(host, text)
  }

  async reports(): Promise<string[]> {
    return [...this.reportsKept.values()]
  }

  async close(): Promise<void> {
    this.listeners = []
  }
}
