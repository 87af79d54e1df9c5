// Vitest global setup. Multi-process tests rely on every process of the test run deriving one application root
// (lib/foundation/regions/namespace.ts, from each entry script's real path): vitest's forks start from vitest's own file, the
// spawned processes from this checkout's test/ files. A node_modules that is a link to another checkout's puts
// vitest in that other application, and dozens of cross-process tests then fail with namespace mismatches that say
// nothing about the cause. Refuse to run instead, naming it.
import { existsSync, realpathSync } from 'fs'
import { join, relative, resolve } from 'path'

import { defaultNamespace } from '../../lib/foundation/regions/namespace'
import { listRegions, removeStaleRegions } from '../../lib/foundation/regions/regions'
import { waitFor } from './wait-for'

/**
 * After the run: the host secret that names keyed collections' regions (key-names.<namespace>.secret) is kept open
 * by every test process that named one, for its life, so the last of them leaves it; nothing of a run stays in
 * /dev/shm (issue 32, item 11). Removed only once stale (a test process may still be exiting; another run of this
 * checkout may still use it: then it stays).
 */
async function teardown(): Promise<void> {
  const secret = `key-names.${defaultNamespace()}.secret`
  const gone = () => removeStaleRegions((name) => name === secret).length > 0 || !listRegions().includes(secret)
  await waitFor(gone, { timeout: 2000, interval: 100 }).catch(() => undefined)
}

export default function setup(): () => Promise<void> {
  const root = resolve(__dirname, '..', '..')
  // No node_modules of its own (dependencies hoisted to a parent directory): nothing links elsewhere.
  if (!existsSync(join(root, 'node_modules'))) return teardown
  const modules = realpathSync(join(root, 'node_modules'))
  if (relative(realpathSync(root), modules).startsWith('..')) {
    throw new Error(
      `${join(root, 'node_modules')} is a link to ${modules}, outside this checkout: processes started by vitest ` +
        `and by the tests would derive two application roots (two namespaces). Run \`npm ci\` in ${root}.`,
    )
  }
  return teardown
}
