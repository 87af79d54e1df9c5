// Runs every benchmark file in bench/ (or those named on the command line), one process each.
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { fileURLToPath } from 'url'

const dir = path.dirname(fileURLToPath(import.meta.url))
const wanted = process.argv.slice(2)
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort()
let failed = 0
for (const f of files) {
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(dir, f)], { stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exit(failed ? 1 : 0)
