// The built package as users load it (dist/, scripts/build-ts.mjs): one CommonJS bundle per entry point and the
// chunks they share, so that every entry, required or imported, gives the same classes and one component registry;
// ES module entries that export the real values; few files for core use, and none of the Node modules that cost a
// worker megabytes (worker_threads, crypto, http2) on the main thread; stack traces that map to lib/; a worker
// thread that records its own id. Each case runs in a fresh process in the package's directory, so 'bulwark/...'
// resolves to this build through package.json `exports`.
import { statSync } from 'fs'
import { join } from 'path'
import { describe, expect, it } from 'vitest'

import { uniqueName } from '../helpers/unique-name'
import { nodeJson, packageRoot } from '../install/child-process'
import { publicNames } from './public-names'

const dist = join(packageRoot, 'dist', 'cjs')
const subpaths = Object.keys(publicNames)
const specifier = (subpath: string) => join('bulwark', subpath).split('\\').join('/')

function inNode<T>(script: string): T {
  return nodeJson<T>(['-e', script], packageRoot)
}

/** Runs an ES module script, with `require` at hand. */
function inEsm<T>(script: string): T {
  const prelude = `import { createRequire } from 'module'\nconst require = createRequire(import.meta.url)\n`
  return nodeJson<T>(['--input-type=module', '-e', prelude + script], packageRoot)
}

describe('the built package', () => {
  it('gives every entry the same classes and one component registry, through require and import', () => {
    const seen = inEsm<Record<string, unknown>>(`
const root = require('bulwark')
const core = require('bulwark/core')
const http = require('bulwark/http')
const { PrometheusMetrics } = require('bulwark/prometheus')
const imported = await import('bulwark')
let badOption
try { http.httpGuard(() => {}, { limiter: 'not a limiter' }) } catch (error) { badOption = error }
// The exporter knows a component by the classes registered when their code loaded: made through another entry, the
// limiter is recognised only if both entries load one registry.
const registry = new (require('prom-client').Registry)()
new PrometheusMetrics({ registry }).add('from-core', new core.BbrLimiter())
console.log(JSON.stringify({
  sameClass: [root.BbrLimiter === core.BbrLimiter, imported.BbrLimiter === core.BbrLimiter, imported.TokenBucket === root.TokenBucket],
  errorAcrossEntries: [badOption instanceof root.InvalidOptionError, badOption instanceof imported.BulwarkError],
  exported: (await registry.metrics()).includes('from-core'),
}))`)
    expect(seen).toEqual({ sameClass: [true, true, true], errorAcrossEntries: [true, true], exported: true })
  })

  it.each(subpaths)('%s: the ES module entry exports the real values of the CommonJS one', (subpath) => {
    const wrong = inEsm<string[]>(`
import { types } from 'util'
const face = await import(${JSON.stringify(specifier(subpath))})
const cjs = require(${JSON.stringify(specifier(subpath))})
const wrong = []
const names = Object.keys(face).filter((name) => name !== 'default')
if (JSON.stringify(names.sort()) !== JSON.stringify(Object.keys(cjs).sort())) wrong.push('names')
for (const name of names) {
  if (face[name] !== cjs[name]) wrong.push(name)
  if (types.isProxy(face[name])) wrong.push(name + ' is a Proxy')
}
if (face.default !== cjs) wrong.push('default')
console.log(JSON.stringify(wrong))`)
    expect(wrong).toEqual([])
  })

  it("keeps each exported class's and function's own name (errors take theirs from it)", () => {
    const renamed = inNode<string[]>(`
const renamed = []
for (const subpath of ${JSON.stringify(subpaths)}) {
  const entry = require(require('path').posix.join('bulwark', subpath))
  for (const [name, value] of Object.entries(entry)) if (typeof value === 'function' && value.name !== name) renamed.push(subpath + ' ' + name + ': ' + value.name)
}
console.log(JSON.stringify(renamed))`)
    expect(renamed).toEqual([])
  })

  it('loads two files and the addon, and neither worker_threads nor crypto, for core use on the main thread', () => {
    const loaded = inNode<{ files: string[]; builtins: string[] }>(`
const before = new Set(Object.keys(require.cache))
const builtins = new Set(process.moduleLoadList)
const b = require('bulwark/core')
new b.BbrLimiter().tryAcquire()
new b.CircuitBreaker({ strategy: 'errorRatio', failureRatio: 0.5 }).tryAcquire()
new b.SreBreaker().tryAcquire()
new b.TokenBucket({ rate: 10, capacity: 10 }).tryAcquire()
console.log(JSON.stringify({
  files: Object.keys(require.cache).filter((f) => !before.has(f)).map((f) => require('path').relative(${JSON.stringify(dist)}, f)),
  builtins: process.moduleLoadList.filter((m) => !builtins.has(m)),
}))`)
    expect(loaded.files.filter((f) => f.endsWith('.js')).sort()).toEqual(['chunks/core.js', 'entries/core.js'])
    expect(loaded.files.filter((f) => f.endsWith('.node'))).toHaveLength(1)
    expect(loaded.builtins).not.toContain('NativeModule worker_threads')
    expect(loaded.builtins).not.toContain('NativeModule crypto')
  })

  it('loads neither node:http2 nor crypto for bulwark/http and its guards', () => {
    const builtins = inNode<string[]>(`
const before = new Set(process.moduleLoadList)
const { httpGuard, http2StreamGuard } = require('bulwark/http')
httpGuard(() => {}, { limiter: {} })
http2StreamGuard(() => {}, { limiter: {} })
console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))))`)
    expect(builtins).not.toContain('NativeModule http2')
    expect(builtins).not.toContain('NativeModule crypto')
  })

  it('maps stack traces to the lib/ sources under --enable-source-maps', () => {
    const stack = nodeJson<string>(
      [
        '--enable-source-maps',
        '-e',
        `try { new (require('bulwark').BbrLimiter)({ cpuThreshold: -1 }) } catch (e) { console.log(JSON.stringify(e.stack)) }`,
      ],
      packageRoot,
    )
    expect(stack).toMatch(/lib\/foundation\/common\/validate\.ts:\d+:\d+/)
    expect(stack).toMatch(/lib\/components\/bbr\/bbr-options\.ts:\d+:\d+/)
  })

  it('ships the `bulwark` command as an executable bundle', () => {
    const help = nodeJson<{ status: number | null; usage: boolean }>(
      [
        '-e',
        `const r = require('child_process').spawnSync(${JSON.stringify(join(dist, 'ops', 'cli', 'bulwark.js'))}, ['--help'], { encoding: 'utf8' })
console.log(JSON.stringify({ status: r.status, usage: r.stdout.startsWith('Usage: bulwark') }))`,
      ],
      packageRoot,
    )
    expect(help).toEqual({ status: 0, usage: true })
    expect(statSync(join(dist, 'ops', 'cli', 'bulwark.js')).mode & 0o111).toBe(0o111)
  })

  it('records a worker thread by its own threadId and the main thread as 0', () => {
    const shared = uniqueName('packed-thread')
    const members = inNode<Array<{ threadId: number }>>(`
const { Worker } = require('worker_threads')
const { BbrLimiter } = require('bulwark')
const main = new BbrLimiter({ shared: ${JSON.stringify(shared)} })
const worker = new Worker(\`
  const { parentPort } = require('worker_threads')
  const { BbrLimiter } = require(\${JSON.stringify(require.resolve('bulwark'))})
  const limiter = new BbrLimiter({ shared: ${JSON.stringify(shared)} })
  parentPort.postMessage('up')
  parentPort.once('message', () => limiter.close())
\`, { eval: true })
worker.once('message', () => {
  const { inspectRegions } = require('bulwark/top')
  const report = inspectRegions({ names: ['*${shared}*'] })
  console.log(JSON.stringify(report.flatMap((r) => r.members).map(({ threadId }) => ({ threadId }))))
  worker.postMessage('done')
  worker.once('exit', () => main.close())
})`)
    expect(members.map((m) => m.threadId).sort()).toEqual([0, 1])
  })
})
