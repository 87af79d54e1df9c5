import { type FSWatcher, promises as fsp, watch } from 'fs'
import * as path from 'path'

import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions } from '../../foundation/common/validate'
import { LIMITS } from './rule-document'
import type { RuleSource, SourceDocument } from './rule-source'

export interface FileRuleSourceOptions {
  /** The document's path: a Kubernetes ConfigMap's key mounted as a volume, or any file. */
  path: string
}

/** A document's own version, read without checking the rest (the watcher checks it whole). */
function versionOf(text: string): number {
  try {
    const version = (JSON.parse(text) as { version?: unknown }).version
    return typeof version === 'number' && Number.isSafeInteger(version) ? version : -1
  } catch {
    return -1
  }
}

/**
 * A fleet's rules in a file (docs/readme/fleet.md): read whole, its revision the document's own `version`. The
 * directory is watched, not the file: Kubernetes updates a ConfigMap volume by pointing a symlink at a new directory,
 * which a watch on the old file never sees; the host's watcher also reads the file on its timer. `bulwark set
 * --source file://...` writes a new file beside it and renames it over (a ConfigMap volume is read-only: change the
 * ConfigMap instead).
 */
export class FileRuleSource implements RuleSource {
  readonly description: string
  private readonly file: string
  private watchers: FSWatcher[] = []

  constructor(options: FileRuleSourceOptions) {
    const o = checkOptions<FileRuleSourceOptions>(options, 'options')
    if (typeof o.path !== 'string' || !path.isAbsolute(o.path))
      throw new InvalidOptionError('path', o.path, 'an absolute path')
    this.file = o.path
    this.description = `file://${o.path}`
  }

  async read(): Promise<SourceDocument | undefined> {
    let handle: fsp.FileHandle
    try {
      handle = await fsp.open(this.file, 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    try {
      // Never more than the bound: a huge file is refused as too large, not read into memory.
      const buffer = Buffer.alloc(LIMITS.documentBytes + 1)
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
      const text = buffer.subarray(0, bytesRead).toString('utf8')
      return { text, revision: versionOf(text) }
    } finally {
      await handle.close()
    }
  }

  watch(listener: (document: SourceDocument) => void, onError: (error: Error) => void): Disposable {
    let stopped = false
    let last: string | undefined
    let reading = false
    let again = false
    const readNow = (): void => {
      if (stopped) return
      if (reading) {
        again = true // changed while being read: read once more after
        return
      }
      reading = true
      again = false
      this.read().then(
        (doc) => {
          reading = false
          if (!stopped && doc !== undefined && doc.text !== last) {
            last = doc.text
            listener(doc)
          }
          if (again) readNow()
        },
        (error: Error) => {
          reading = false
          if (!stopped) onError(error)
          if (again) readNow()
        },
      )
    }
    let watcher: FSWatcher | undefined
    try {
      watcher = watch(path.dirname(this.file), { persistent: false }, readNow)
      watcher.on('error', (error) => !stopped && onError(error))
      this.watchers.push(watcher)
    } catch (error) {
      onError(error as Error) // no directory yet: the watcher's timer reads the file when it appears
    }
    readNow()
    return toDisposable(() => {
      stopped = true
      watcher?.close()
      this.watchers = this.watchers.filter((w) => w !== watcher)
    })
  }

  async write(text: string, expected: number | undefined): Promise<number | undefined> {
    const current = await this.read()
    if ((current === undefined ? undefined : current.revision) !== expected) return undefined
    const temporary = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.tmp`)
    await fsp.writeFile(temporary, text, { mode: 0o644 })
    await fsp.rename(temporary, this.file)
    return versionOf(text)
  }

  async close(): Promise<void> {
    for (const watcher of this.watchers.splice(0)) watcher.close()
  }
}
