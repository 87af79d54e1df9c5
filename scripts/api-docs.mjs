// The API reference (`npm run docs`): typedoc over every entry point package.json exports (`bulwark`,
// `bulwark/prometheus`, ...), each mapped from its built declarations back to its source in lib/, so that a new
// subpath is documented without editing this script. Settings are in typedoc.json: names marked @internal are left
// out (excludeInternal), and the output goes to docs/api/ (not committed). Fails on any warning, broken links
// included, so CI catches them. Pages carry no links to source lines (disableSources): typedoc builds those from the
// git remote, and warns, failing the build, when there is none or it is a local path (a worktree, CI's clone).
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { fileURLToPath } from 'url'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const { exports } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))

const entryPoints = Object.values(exports)
  .map((target) => target.types)
  .filter(Boolean)
  .map((types) => types.replace(/^\.\/dist\/cjs\//, 'lib/').replace(/\.d\.ts$/, '.ts'))
for (const entry of entryPoints) {
  if (!fs.existsSync(path.join(root, entry))) throw new Error(`package.json exports ${entry}, which does not exist`)
}

const typedoc = path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc')
const args = [
  '--options',
  'typedoc.json',
  '--treatWarningsAsErrors',
  ...entryPoints.flatMap((e) => ['--entryPoints', e]),
]
const result = spawnSync(process.execPath, [typedoc, ...args, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
