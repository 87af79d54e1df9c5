// The built package as users load it (dist/, packed by scripts/pack-cjs.js): one instance of each module whatever
// the path it is reached by, only the packs that are needed, and none of the Node modules that cost a worker
// megabytes (worker_threads, crypto) for core use on the main thread; a worker thread still records its own id.
import { join } from 'path'
import { describe, expect, it } from 'vitest'

import { uniqueName } from '../helpers/unique-name'
import { nodeJson, packageRoot } from '../install/child-process'

const dist = join(packageRoot, 'dist', 'cjs')

function inNode<T>(script: string): T {
  return nodeJson<T>(['-e', `const dist = ${JSON.stringify(dist)}\n${script}`], packageRoot)
}

describe('the packed build', () => {
  it('gives one instance of a class through the root, bulwark/core, a subpath and a deep path', () => {
    const same = inNode<boolean[]>(`
const root = require(dist)
const core = require(dist + '/entries/core')
console.log(JSON.stringify([
  root.BbrLimiter === core.BbrLimiter,
  root.BbrLimiter === require(dist + '/components/bbr/bbr-limiter').BbrLimiter,
  root.NativeLoadError === require(dist + '/foundation/errors/native-load-error').NativeLoadError,
  require(dist + '/entries/http').InboundGuard === require(dist + '/guards/inbound/inbound-guard').InboundGuard,
]))`)
    expect(same).toEqual([true, true, true, true])
  })

  it('loads a few packed files, and neither worker_threads nor crypto, for core use on the main thread', () => {
    const loaded = inNode<{ files: string[]; builtins: string[] }>(`
const before = new Set(Object.keys(require.cache))
const builtins = new Set(process.moduleLoadList)
const b = require(dist + '/entries/core')
new b.BbrLimiter().tryAcquire()
new b.CircuitBreaker({ strategy: 'errorRatio', failureRatio: 0.5 }).tryAcquire()
new b.SreBreaker().tryAcquire()
new b.TokenBucket({ rate: 10, capacity: 10 }).tryAcquire()
console.log(JSON.stringify({
  files: Object.keys(require.cache).filter((f) => !before.has(f)).map((f) => require('path').relative(dist, f)),
  builtins: process.moduleLoadList.filter((m) => !builtins.has(m)),
}))`)
    const code = loaded.files.filter((f) => f.endsWith('.js'))
    expect(code.sort()).toEqual([
      'entries/core.js',
      'packed/bbr.js',
      'packed/breakers.js',
      'packed/core-entry.js',
      'packed/core.js',
      'packed/loader.js',
    ])
    expect(loaded.builtins).not.toContain('NativeModule worker_threads')
    expect(loaded.builtins).not.toContain('NativeModule crypto')
  })

  it('loads a BbrLimiter alone without the breakers, and its optional parts only when their options are given', () => {
    const packs = inNode<Record<string, string[]>>(`
const loaded = () => Object.keys(require.cache).filter((f) => f.includes('packed')).map((f) => require('path').basename(f))
const root = require(dist)
const { BbrLimiter } = root
const plain = new BbrLimiter()
plain.tryAcquire()
const alone = loaded()
const fair = new BbrLimiter({ fairness: true })
fair.release(fair.tryAcquire('normal', 'tenant'))
const withFairness = loaded()
const queued = new BbrLimiter({ maxWait: 5 })
const withQueue = loaded()
const { CircuitBreaker } = root
new CircuitBreaker({ strategy: 'errorCount', failureCount: 3 }).tryAcquire()
const breaker = loaded()
new CircuitBreaker({ strategy: 'errorCount', failureCount: 3, switches: new root.Switchboard() }).tryAcquire()
const withSwitches = loaded()
for (const l of [plain, fair, queued]) l.close()
console.log(JSON.stringify({ alone, withFairness, withQueue, breaker, withSwitches }))`)
    expect(packs.alone.sort()).toEqual(['bbr.js', 'core.js', 'index.js', 'loader.js'])
    expect(packs.withFairness).toContain('hotkeys.js')
    expect(packs.withFairness).not.toContain('queue.js')
    expect(packs.withQueue).toContain('queue.js')
    expect(packs.breaker).toContain('breakers.js')
    expect(packs.breaker).not.toContain('switches.js')
    expect(packs.withSwitches).toContain('switches.js')
  })

  it('loads what the core runs only for a shared component or a failure when it is needed, its errors typed', () => {
    const seen = inNode<{ plain: string[]; shared: string[]; typed: boolean[]; field: string }>(`
const loaded = () => Object.keys(require.cache).filter((f) => f.includes('packed')).map((f) => require('path').basename(f))
const root = require(dist)
new root.BbrLimiter().tryAcquire()
const plain = loaded()
let error
try { new root.BbrLimiter({ shared: 'packed-lazy', namespace: 'not a namespace' }) } catch (e) { error = e }
const core = require(dist + '/entries/core')
console.log(JSON.stringify({
  plain,
  shared: loaded(),
  typed: [error instanceof root.InvalidOptionError, error instanceof core.BulwarkError, core.isInvalidOptionError(error)],
  field: error.field,
}))`)
    expect(seen.plain).not.toContain('core-lazy.js')
    expect(seen.plain).not.toContain('core-entry.js')
    expect(seen.shared).toContain('core-lazy.js')
    expect(seen.typed).toEqual([true, true, true])
    expect(seen.field).toBe('namespace')
  })

  it('maps stack traces to the lib/ sources under --enable-source-maps', () => {
    const stack = nodeJson<string>(
      [
        '--enable-source-maps',
        '-e',
        `try { new (require(${JSON.stringify(dist)}).BbrLimiter)({ cpuThreshold: -1 }) } catch (e) { console.log(JSON.stringify(e.stack)) }`,
      ],
      packageRoot,
    )
    expect(stack).toMatch(/lib\/foundation\/common\/validate\.ts:\d+:\d+/)
    expect(stack).toMatch(/lib\/components\/bbr\/bbr-options\.ts:\d+:\d+/)
  })

  it('loads neither node:http2 nor crypto for bulwark/http until a guard needs them', () => {
    const builtins = inNode<string[]>(`
const before = new Set(process.moduleLoadList)
const { httpGuard, http2StreamGuard } = require(dist + '/entries/http')
httpGuard(() => {}, { limiter: {} })
http2StreamGuard(() => {}, { limiter: {} })
console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))))`)
    expect(builtins).not.toContain('NativeModule http2')
    expect(builtins).not.toContain('NativeModule crypto')
  })

  it('loads no component for an exporter until a component is made', () => {
    const modules = inNode<string[]>(`
require(dist + '/ops/metrics/prometheus')
console.log(JSON.stringify(Object.keys(require.cache).map((f) => require('path').relative(dist, f))))`)
    expect(modules).not.toContain('packed/components.js')
    expect(modules).not.toContain('packed/integrations.js')
    expect(modules).not.toContain('packed/redis.js')
  })

  it('records a worker thread by its own threadId and the main thread as 0', () => {
    const shared = uniqueName('packed-thread')
    const members = inNode<Array<{ threadId: number }>>(`
const { Worker } = require('worker_threads')
const { BbrLimiter } = require(dist)
const main = new BbrLimiter({ shared: ${JSON.stringify(shared)} })
const worker = new Worker(\`
  const { parentPort } = require('worker_threads')
  const { BbrLimiter } = require(\${JSON.stringify(dist)})
  const limiter = new BbrLimiter({ shared: ${JSON.stringify(shared)} })
  parentPort.postMessage('up')
  parentPort.once('message', () => limiter.close())
\`, { eval: true })
worker.once('message', () => {
  const { inspectRegions } = require(dist + '/entries/top')
  const report = inspectRegions({ names: ['*${shared}*'] })
  console.log(JSON.stringify(report.flatMap((r) => r.members).map(({ threadId }) => ({ threadId }))))
  worker.postMessage('done')
  worker.once('exit', () => main.close())
})`)
    expect(members.map((m) => m.threadId).sort()).toEqual([0, 1])
  })
})
