// Vitest global setup. Multi-process tests rely on every process of the test run deriving one application root
// (lib/foundation/regions/namespace.ts, from each entry script's real path): vitest's forks start from vitest's own file, the
// spawned processes from this checkout's test/ files. A node_modules that is a link to another checkout's puts
// vitest in that other application, and dozens of cross-process tests then fail with namespace mismatches that say
// nothing about the cause. Refuse to run instead, naming it.
import { existsSync, realpathSync } from 'fs'
import { join, relative, resolve } from 'path'

export default function setup(): void {
  const root = resolve(__dirname, '..', '..')
  // No node_modules of its own (dependencies hoisted to a parent directory): nothing links elsewhere.
  if (!existsSync(join(root, 'node_modules'))) return
  const modules = realpathSync(join(root, 'node_modules'))
  if (relative(realpathSync(root), modules).startsWith('..')) {
    throw new Error(
      `${join(root, 'node_modules')} is a link to ${modules}, outside this checkout: processes started by vitest ` +
        `and by the tests would derive two application roots (two namespaces). Run \`npm ci\` in ${root}.`,
    )
  }
}
