// Application namespaces (issue 13 item 3, docs/guide/trust.md): two unrelated applications of one user that both
// name a limiter `api` keep apart; the processes and threads of one application share.
import { type ChildProcess, fork, spawn, spawnSync } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'

import { InvalidOptionError, listRegions, TokenBucket } from '../../dist/cjs'
import { applicationRoot, namespaceOfRoot, splitRegionName } from '../../lib/foundation/regions/namespace'
import { uniqueName } from '../helpers/unique-name'

const dist = path.resolve(__dirname, '..', '..', 'dist', 'cjs')
const apps = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-apps-'))
afterAll(() => fs.rmSync(apps, { recursive: true, force: true }))

// An application: a directory with a package.json and a server that opens the limiter `api`, takes every token it
// can, reports how many, and holds the limiter until told to go.
function makeApp(directory: string, name = directory): string {
  const dir = path.join(apps, directory)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true }))
  const server = path.join(dir, 'server.cjs')
  fs.writeFileSync(
    server,
    `const { TokenBucket } = require(${JSON.stringify(dist)})
const { shared, burst, maxMembers } = JSON.parse(process.argv[2])
try {
  const bucket = new TokenBucket({ shared, rate: 0.001, burst, maxMembers, now: () => 0 })
  let taken = 0
  while (bucket.tryAcquire()) taken++
  process.send({ taken })
  process.on('message', () => (bucket.close(), process.exit(0)))
} catch (error) {
  process.send({ error: error.name }, () => process.exit(0))
}
`,
  )
  return server
}

const running: ChildProcess[] = []
afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

function start(server: string, job: object, env: NodeJS.ProcessEnv = {}): Promise<{ taken?: number; error?: string }> {
  const child = fork(server, [JSON.stringify(job)], {
    stdio: 'inherit',
    env: { ...process.env, BULWARK_NAMESPACE: '', ...env },
  })
  running.push(child)
  return new Promise((resolve, reject) => {
    child.once('message', resolve)
    child.once('exit', (code) => reject(new Error(`app exited with ${code} before reporting`)))
  })
}

describe('two applications of one user that both name a limiter `api`', () => {
  const shop = makeApp('shop')
  const blog = makeApp('blog')

  it('keep apart by default, even with different options (before: shared state, or RegionMismatchError)', async () => {
    const shared = uniqueName('api')
    expect(await start(shop, { shared, burst: 5, maxMembers: 8 })).toEqual({ taken: 5 })
    // Before: `blog` attached to `shop`'s region: RegionMismatchError (another burst and maxMembers).
    expect(await start(blog, { shared, burst: 7, maxMembers: 16 })).toEqual({ taken: 7 })
    // Same options: before, `blog` found the bucket `shop` had emptied.
    const same = uniqueName('api')
    expect(await start(shop, { shared: same, burst: 5 })).toEqual({ taken: 5 })
    expect(await start(blog, { shared: same, burst: 5 })).toEqual({ taken: 5 })
  })

  it('the processes of one application share (as cluster workers do)', async () => {
    const shared = uniqueName('api')
    expect(await start(shop, { shared, burst: 5 })).toEqual({ taken: 5 })
    expect(await start(shop, { shared, burst: 5 })).toEqual({ taken: 0 })
  })

  it('BULWARK_NAMESPACE chooses: the same value shares across applications, different values keep apart', async () => {
    const shared = uniqueName('api')
    expect(await start(shop, { shared, burst: 5 }, { BULWARK_NAMESPACE: 'storefront' })).toEqual({ taken: 5 })
    expect(await start(blog, { shared, burst: 5 }, { BULWARK_NAMESPACE: 'storefront' })).toEqual({ taken: 0 })
    expect(await start(shop, { shared, burst: 5 }, { BULWARK_NAMESPACE: 'other' })).toEqual({ taken: 5 })
  })
})

// Issue 32, item 4: the default namespace was the root directory's name and a hash of its path, so two different
// applications run from one path (`/app` in two containers of one uid sharing /dev/shm: pods sharing memory, docker
// --ipc=host) merged their state. Each "container" here is a mount namespace with its own directory bind-mounted at
// the same path, as a container's image puts its own /app there.
const canMount =
  process.platform === 'linux' &&
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0
const mountWhy = canMount ? '' : ' (skipped: needs root and unshare, to give processes their own mounts)'

describe.skipIf(!canMount)(`two applications run from the same path in two containers${mountWhy}`, () => {
  const at = path.join(apps, 'app') // the path they run from, each with its own directory mounted there
  fs.mkdirSync(at, { recursive: true })

  /** `server` (an application's directory's server.cjs) run from `at`, its directory mounted there. */
  function startIn(server: string, job: object): Promise<{ taken?: number; error?: string }> {
    const script = `mount --bind "$1" "$2" && exec "$3" "$2/server.cjs" "$4"`
    const args = ['-m', '--propagation', 'private', 'sh', '-c', script, 'sh', path.dirname(server), at]
    const child = spawn('unshare', [...args, process.execPath, JSON.stringify(job)], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BULWARK_NAMESPACE: '' },
    })
    running.push(child)
    return new Promise((resolve, reject) => {
      child.once('message', resolve)
      child.once('exit', (code) => reject(new Error(`app exited with ${code} before reporting`)))
    })
  }

  it('keep apart: another package, or the same name in another directory (before: one bucket)', async () => {
    const orders = makeApp('orders')
    const billing = makeApp('billing')
    const shared = uniqueName('api')
    expect(await startIn(orders, { shared, burst: 5 })).toEqual({ taken: 5 })
    expect(await startIn(billing, { shared, burst: 5 })).toEqual({ taken: 5 }) // before: 0, orders' bucket
    // Two images whose package.json both say `app`: their directories still differ.
    const first = makeApp('first-app', 'app')
    const second = makeApp('second-app', 'app')
    const same = uniqueName('api')
    expect(await startIn(first, { shared: same, burst: 5 })).toEqual({ taken: 5 })
    expect(await startIn(second, { shared: same, burst: 5 })).toEqual({ taken: 5 })
  })

  it('the processes of one application still share, in one container or in two mounting the same directory', async () => {
    const shop = makeApp('shop-in-containers')
    const shared = uniqueName('api')
    expect(await startIn(shop, { shared, burst: 5 })).toEqual({ taken: 5 })
    expect(await startIn(shop, { shared, burst: 5 })).toEqual({ taken: 0 })
  })
})

describe('the namespace option', () => {
  it('names the namespace of one component; the region is listed as <kind>.<namespace>.<shared>', () => {
    const shared = uniqueName('api')
    const a = new TokenBucket({ shared, namespace: 'team-a', rate: 0.001, burst: 2, now: () => 0 })
    const b = new TokenBucket({ shared, namespace: 'team-b', rate: 0.001, burst: 2, now: () => 0 })
    expect([a.tryAcquire(), a.tryAcquire(), a.tryAcquire()]).toEqual([true, true, false])
    expect(b.tryAcquire()).toBe(true)
    const mine = listRegions().filter((r: string) => r.endsWith(shared))
    expect(mine.sort()).toEqual([`token-bucket.team-a.${shared}`, `token-bucket.team-b.${shared}`])
    expect(splitRegionName(mine[0])).toEqual({ kind: 'token-bucket', namespace: 'team-a', shared })
    a.close()
    b.close()
  })

  it.each(['', 'a.b', 'x'.repeat(41), 'é', 7])('refuses namespace %j with a typed error', (namespace) => {
    expect(() => new TokenBucket({ shared: 'x', namespace: namespace as string, rate: 1 })).toThrow(InvalidOptionError)
  })

  it('refuses a BULWARK_NAMESPACE that cannot be one, naming the variable', () => {
    const before = process.env.BULWARK_NAMESPACE
    process.env.BULWARK_NAMESPACE = 'not/ok'
    try {
      expect(() => new TokenBucket({ shared: 'x', rate: 1 })).toThrow(/BULWARK_NAMESPACE/)
    } finally {
      if (before === undefined) delete process.env.BULWARK_NAMESPACE
      else process.env.BULWARK_NAMESPACE = before
    }
  })
})

describe('the default namespace', () => {
  it('is derived from the application root: the package of the entry script, or the project around node_modules', () => {
    const project = path.join(apps, 'project')
    fs.mkdirSync(path.join(project, 'src', 'deep'), { recursive: true })
    fs.writeFileSync(path.join(project, 'package.json'), '{}')
    expect(applicationRoot(path.join(project, 'src', 'deep', 'main.js'))).toBe(fs.realpathSync(project))
    expect(applicationRoot('/srv/app/node_modules/.bin/runner')).toBe('/srv/app')
    expect(applicationRoot('', '/srv/cwd')).toBe('/srv/cwd') // no entry script: node -e, a REPL
    const loose = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-loose-'))
    expect(applicationRoot(path.join(loose, 'script.js'))).toBe(fs.realpathSync(loose))
    fs.rmSync(loose, { recursive: true, force: true })
    expect(namespaceOfRoot('/srv/shop')).toMatch(/^shop-[0-9a-f]{8}$/)
    expect(namespaceOfRoot('/srv/shop')).not.toBe(namespaceOfRoot('/opt/shop'))
    expect(namespaceOfRoot('/')).toMatch(/^root-[0-9a-f]{8}$/)
  })
})
