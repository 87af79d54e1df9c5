// A fleet's rules on a real host (docs/readme/fleet.md): worker processes started with BULWARK_RULES and nothing
// else, a real Redis or etcd, the `bulwark` command line writing through it. One process watches the source; kill
// it and another takes over; cut the source and the host keeps its rules; restart a host during the outage and it
// starts from the last good rules on disk.
import { type ChildProcess, execFile, fork } from 'child_process'
import * as fs from 'fs'
import * as net from 'net'
import * as os from 'os'
import * as path from 'path'
import { promisify } from 'util'

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { EtcdServer, etcdTarget } from '../helpers/etcd-server'
import { RedisServer, redisTarget } from '../helpers/redis-server'
import { tooBusyToJudge, withTimerLag } from '../helpers/timer-lag'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import '../helpers/cleanup-regions'

const member = path.join(__dirname, '..', 'fixtures', 'fleet-member.cjs')
const cli = path.join(__dirname, '..', '..', 'dist', 'cjs', 'ops', 'cli', 'bulwark.js')
const run = promisify(execFile)

interface Report {
  pid: number
  rate: number
  version: number
  switches: string[]
  watching: boolean
  fromDisk: boolean
  at: number
}

const children: ChildProcess[] = []
const dirs: string[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/** A host: its namespace, its cache directory, and the members it starts (each report lands in `reports`). */
function host(url: string) {
  const namespace = uniqueName('fh')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-40)
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-fleet-cache-'))
  dirs.push(cache)
  const reports: Report[] = []
  const env = { ...process.env, BULWARK_RULES: url, BULWARK_NAMESPACE: namespace, BULWARK_RULES_CACHE: cache }
  const start = () => {
    const child = fork(member, [], { env, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] })
    child.on('message', (m) => reports.push(m as Report))
    children.push(child)
    return child
  }
  /** The newest report of each live member. */
  const latest = () => {
    const byPid = new Map<number, Report>()
    for (const r of reports)
      if (children.some((c) => c.pid === r.pid && c.exitCode === null && c.signalCode === null)) byPid.set(r.pid, r)
    return [...byPid.values()]
  }
  const bulwark = async (...args: string[]) =>
    (await run(process.execPath, [cli, ...args], { env: { ...process.env, BULWARK_RULES: '' } })).stdout
  const set = (...args: string[]) =>
    bulwark('set', '--source', url, '--namespace', namespace, '--author', 'test', ...args)
  return { namespace, cache, env, reports, start, latest, bulwark, set }
}

/** A TCP proxy in front of the source that the test can cut (every connection refused or dropped) and restore. */
async function proxy(port: number): Promise<{ port: number; cut(): void; restore(): void; close(): void }> {
  let open = true
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    if (!open) return client.destroy()
    const upstream = net.connect(port, '127.0.0.1')
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => undefined)
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      open = false
      for (const s of sockets) s.destroy()
    },
    restore: () => (open = true),
    close: () => server.close(),
  }
}

const redis = redisTarget(true)

describe.skipIf(!redis)('a host following Redis with no code change', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start(redis!.binary!)
  })
  afterAll(() => server?.stop())

  it('one process watches; every process obeys a change made with `bulwark set --source`; top shows the watcher', async () => {
    const h = host(server.url)
    for (let i = 0; i < 3; i++) h.start()
    await waitFor(() => h.latest().length === 3 && h.latest().filter((r) => r.watching).length === 1, {
      what: 'three members, one watching',
    })
    expect(await h.set('token-bucket.gw', 'rate=500')).toMatch(/version 1 written/)
    // Checked before anything is written: exit code 2, the field named.
    await expect(h.set('token-bucket.gw', 'rate=-1')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/components\.token-bucket\.gw\.rules\.rate` must be a finite number > 0/),
    })
    expect(await h.set('switches.api', 'priority:low=shed')).toMatch(/version 2 written/)
    await waitFor(() => h.latest().every((r) => r.rate === 500 && r.switches.join() === 'priority:low=shed'), {
      what: 'every member obeys',
    })
    const watcher = h.latest().find((r) => r.watching)!
    const frame = JSON.parse(await h.bulwark('top', '--once', '--json', '--interval', '0.05', `${h.namespace}/rules`))
    expect(frame.regions[0].view).toMatchObject({
      type: 'rules-watcher',
      version: 2,
      sourceUp: true,
      watcher: { pid: watcher.pid },
    })
    expect(await h.bulwark('rules', 'status', '--namespace', h.namespace)).toMatch(
      new RegExp(`version 2 .*\\n  watcher: pid ${watcher.pid}`),
    )
    const status = await h.bulwark('rules', 'status', '--source', server.url, '--namespace', h.namespace)
    expect(status).toMatch(/hosts: 1 reporting, 1 on version 2/)
    const history = await h.bulwark('rules', 'history', '--source', server.url, '--namespace', h.namespace)
    expect(history).toMatch(/^2 .* test {2}set\n {4}switches api priority:low: - -> "shed"\n1 /)
    expect(await h.bulwark('rules', 'rollback', '--source', server.url, '--namespace', h.namespace, '0')).toMatch(
      /version 3/,
    )
    await waitFor(() => h.latest().every((r) => r.switches.length === 0 && r.version === 3), {
      what: 'the rollback obeyed',
    })
  })

  it('the watching process killed: another takes over within a second and no change is lost', async (ctx) => {
    const h = host(server.url)
    for (let i = 0; i < 3; i++) h.start()
    await waitFor(() => h.latest().filter((r) => r.watching).length === 1, { what: 'a watcher' })
    const watcher = children.find((c) => c.pid === h.latest().find((r) => r.watching)!.pid)!
    const killedAt = Date.now()
    const [next, lag] = await withTimerLag(async () => {
      watcher.kill('SIGKILL')
      await h.set('token-bucket.gw', 'rate=321') // while nobody watches
      return waitFor(() => h.latest().find((r) => r.watching && r.pid !== watcher.pid), { what: 'a new watcher' })
    })
    await waitFor(() => h.latest().length === 2 && h.latest().every((r) => r.rate === 321), {
      what: 'the change obeyed',
    })
    expect(h.latest().map((r) => r.rate)).toEqual([321, 321])
    const busy = tooBusyToJudge(lag)
    // eslint-disable-next-line vitest/no-disabled-tests -- the takeover's time is not judged on a busy machine, and says why
    ctx.skip(busy !== undefined, `takeover in ${next.at - killedAt} ms, not judged: ${busy}`)
    expect(next.at - killedAt).toBeLessThan(1000)
  })

  it('the source cut: the host keeps its rules and says it is stale; back, it catches up with what changed meanwhile', async (ctx) => {
    const cutter = await proxy(server.port)
    try {
      const h = host(`redis://127.0.0.1:${cutter.port}`)
      h.start()
      await waitFor(() => h.latest()[0]?.watching, { what: 'a watcher' })
      await h.bulwark('set', '--source', server.url, '--namespace', h.namespace, 'token-bucket.gw', 'rate=100')
      await waitFor(() => h.latest()[0]?.rate === 100)
      cutter.cut()
      await waitFor(async () => /source: down/.test(await h.bulwark('rules', 'status', '--namespace', h.namespace)), {
        what: 'the watcher to see the source down',
      })
      // Written straight to Redis while this host cannot hear it.
      await h.bulwark('set', '--source', server.url, '--namespace', h.namespace, 'token-bucket.gw', 'rate=200')
      expect(h.latest()[0].rate).toBe(100)
      const back = Date.now()
      const [caught, lag] = await withTimerLag(() => {
        cutter.restore()
        return waitFor(() => h.reports.find((r) => r.rate === 200), { what: 'the host catching up' })
      })
      const busy = tooBusyToJudge(lag)
      // eslint-disable-next-line vitest/no-disabled-tests -- the catch-up's time is not judged on a busy machine, and says why
      ctx.skip(busy !== undefined, `caught up in ${caught.at - back} ms, not judged: ${busy}`)
      // Within a second of the source answering: the watcher reads it at least once a second.
      expect(caught.at - back).toBeLessThan(1500)
    } finally {
      cutter.close()
    }
  })

  it('the connection to Redis lives in an unref’d thread: a process with nothing left to do ends', async () => {
    // No process.exit: once the bucket is closed, only the watcher's connection could keep the process alive.
    const script = `
const { TokenBucket } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'cjs', 'index.js'))})
const bucket = new TokenBucket({ rate: 1, burst: 1, shared: 'gw' })
const timer = setInterval(() => {
  const stats = require('bulwark/fleet').rulesFollower()?.stats()
  if (!stats?.watching || !stats.sourceUp) return
  clearInterval(timer)
  bucket.close()
  console.log('source up')
}, 5)`
    const { env } = host(server.url)
    const ended = await run(process.execPath, ['-e', script], { env, timeout: 15_000 })
    expect(ended.stdout).toBe('source up\n')
  })

  it('a host started while its source is down serves with the last good rules kept on disk', async () => {
    const cutter = await proxy(server.port)
    try {
      const h = host(`redis://127.0.0.1:${cutter.port}`)
      const first = h.start()
      await waitFor(() => h.latest()[0]?.watching)
      await h.bulwark('set', '--source', server.url, '--namespace', h.namespace, 'token-bucket.gw', 'rate=77')
      await waitFor(() => h.latest()[0]?.rate === 77)
      await waitFor(() => fs.existsSync(path.join(h.cache, `${h.namespace}.json`)), {
        what: 'the last good rules on disk',
      })
      first.send('stop')
      await waitFor(() => first.exitCode !== null)
      cutter.cut()
      h.start()
      const started = await waitFor(() => h.latest()[0], { what: 'the restarted member' })
      expect(started).toMatchObject({ rate: 77, version: 1, fromDisk: true })
    } finally {
      cutter.close()
    }
  })
})

const etcd = etcdTarget()

describe.skipIf(!etcd)('a host following etcd with no code change', () => {
  let server: EtcdServer
  beforeAll(async () => {
    server = await EtcdServer.start(etcd!)
  }, 30_000)
  afterAll(() => server?.stop())

  it('obeys a change, a canary on its label first, then the promotion', async () => {
    const h = host(server.url)
    h.start()
    await waitFor(() => h.latest()[0]?.watching, { what: 'a watcher' })
    await h.set('token-bucket.gw', 'rate=10')
    await waitFor(() => h.latest()[0]?.rate === 10)
    await h.set('--canary', 'zone=elsewhere', 'token-bucket.gw', 'rate=20') // not this host
    await waitFor(() => h.latest()[0]?.version === 2)
    expect(h.latest()[0].rate).toBe(10)
    await h.bulwark('rules', 'promote', '--source', server.url, '--namespace', h.namespace)
    await waitFor(() => h.latest()[0]?.rate === 20, { what: 'the promoted canary' })
  })
})
