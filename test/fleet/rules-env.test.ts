// BULWARK_RULES with no code change, through every public entry (lib/entries/rules-env.ts): a process that loads one
// entry of the build and makes a shared TokenBucket follows the source the variable names. The bucket comes from the
// build's core chunk, which every entry loads (an entry such as 'bulwark/http' exports no bucket): what follows is
// the whole path, from the check at load to the 'bulwark/fleet' entry the hook requires by the package's name and
// the thread it reads the file in.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { setComponent } from '../../lib/ops/fleet/document-changes'
import { emptyDocument } from '../../lib/ops/fleet/rule-document'
import { uniqueName } from '../helpers/unique-name'
import { cleanEnv, nodeJson, packageRoot } from '../install/child-process'

const exportsMap = (
  JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { require?: string }>
  }
).exports
// The subpaths whose code is an entry point of lib/entries (or lib/index.ts); the exporters' subpaths make nothing.
const entries = Object.entries(exportsMap)
  .map(([subpath, target]) => [subpath, typeof target === 'string' ? target : (target.require ?? '')] as const)
  .filter(([, file]) => file === './dist/cjs/index.js' || file.startsWith('./dist/cjs/entries/'))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-rules-env-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const document = JSON.stringify(
  setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: 250 } }, { author: 't' }),
)
const rules = path.join(dir, 'rules.json')
fs.writeFileSync(rules, document)

// Makes a shared TokenBucket, polls its rule until it changes (10 s at most) and prints the rate it obeys then.
const obeyedRate = `
const bucket = new TokenBucket({ rate: 1, burst: 1, shared: 'gw' })
const deadline = Date.now() + 10000
const timer = setInterval(() => {
  bucket.tryAcquire()
  const rate = bucket.stats().rules.values.rate
  if (rate === 1 && Date.now() < deadline) return
  clearInterval(timer)
  bucket.close()
  console.log(JSON.stringify({ rate }))
  process.exit(0)
}, 5)`

describe('BULWARK_RULES through each public entry', () => {
  it('covers the root and every subpath of lib/entries', () => {
    expect(entries.map(([subpath]) => subpath)).toEqual(expect.arrayContaining(['.', './core', './http', './fleet']))
  })

  it.each(entries)('%s: a shared component takes the source’s rule', (_subpath, file) => {
    const script = `
require(${JSON.stringify(path.join(packageRoot, file))})
const { TokenBucket } = require(${JSON.stringify(path.join(packageRoot, 'dist', 'cjs', 'chunks', 'core.js'))})
${obeyedRate}`
    expect(nodeJson<{ rate: number }>(['-e', script], packageRoot, followingEnv())).toEqual({ rate: 250 })
  })

  it('the root’s ES module face: its names load the entry, and its check, before any component is made', () => {
    const script = `
const { TokenBucket } = await import(${JSON.stringify(path.join(packageRoot, 'dist', 'esm', 'index.mjs'))})
${obeyedRate}`
    const args = ['--input-type=module', '-e', script]
    expect(nodeJson<{ rate: number }>(args, packageRoot, followingEnv())).toEqual({ rate: 250 })
  })
})

/** A process that follows the file source, in a namespace of its own. */
function followingEnv(): NodeJS.ProcessEnv {
  const namespace = uniqueName('env')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-40)
  return cleanEnv({ BULWARK_RULES: `file://${rules}`, BULWARK_NAMESPACE: namespace, BULWARK_RULES_CACHE: dir })
}
