import * as fs from 'fs'

/**
 * Replaces a fixture file the sampler thread may be reading at that moment, as the kernel's files change: whole, by
 * a rename. writeFileSync truncates first, and a read in between sees an empty file (for a cgroup's usage, a source
 * gone: the reader falls back to the host's figures for good).
 */
export function replaceFile(file: string, text: string): void {
  const next = `${file}.next`
  fs.writeFileSync(next, text)
  fs.renameSync(next, file)
}
