import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

import { LIMITS } from './rule-document'

/** The environment variable that names the directory of the last good documents. */
export const CACHE_ENV = 'BULWARK_RULES_CACHE'

/** What is kept on disk: the source's document as it was last applied, and when. */
export interface LastGood {
  text: string
  /** Date.now() when it was saved. */
  savedAt: number
  source: string
}

/** The default directory: BULWARK_RULES_CACHE, else one of this user's in the temporary directory. */
export function defaultCacheDir(): string {
  const fromEnv = process.env[CACHE_ENV]
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv
  return path.join(os.tmpdir(), `bulwark-rules-${process.getuid?.() ?? 'user'}`)
}

/** Whether `stat` is this user's and nobody else may write it (another local user must not plant rules). */
function ownedAndPrivate(stat: fs.Stats): boolean {
  const uid = process.getuid?.()
  return (uid === undefined || stat.uid === uid) && (process.platform === 'win32' || (stat.mode & 0o022) === 0)
}

/**
 * The last good document of a namespace, kept on disk by the host's watcher so that a process started while the
 * source is down obeys it (docs/readme/fleet.md, "When the source is down"). A file another user owns, that others
 * may write, or that is larger than a document may be, is ignored; what is read is checked again like any document.
 */
export class LastGoodStore {
  readonly file: string

  constructor(
    readonly dir: string,
    namespace: string,
  ) {
    this.file = path.join(dir, `${namespace}.json`)
  }

  /** The document kept, or undefined (none, unreadable, or not trustworthy). Synchronous: read at start-up. */
  read(): LastGood | undefined {
    try {
      const dirStat = fs.lstatSync(this.dir)
      const stat = fs.lstatSync(this.file)
      if (!dirStat.isDirectory() || !ownedAndPrivate(dirStat)) return undefined
      if (!stat.isFile() || !ownedAndPrivate(stat) || stat.size > LIMITS.documentBytes * 2) return undefined
      const kept = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<LastGood>
      if (typeof kept.text !== 'string' || typeof kept.savedAt !== 'number' || typeof kept.source !== 'string')
        return undefined
      return { text: kept.text, savedAt: kept.savedAt, source: kept.source }
    } catch {
      return undefined
    }
  }

  /** Keeps `text` (written whole to a new file, then renamed over the old one). Throws when it cannot. */
  async write(kept: LastGood): Promise<void> {
    await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 })
    const dirStat = await fs.promises.lstat(this.dir)
    if (!dirStat.isDirectory() || !ownedAndPrivate(dirStat))
      throw new Error(`${this.dir} is not a directory of this user that only it may write`)
    const temporary = `${this.file}.${process.pid}.tmp`
    await fs.promises.writeFile(temporary, JSON.stringify(kept), { mode: 0o600 })
    await fs.promises.rename(temporary, this.file)
  }
}
