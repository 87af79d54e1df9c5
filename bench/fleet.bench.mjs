// A fleet's rules end to end (docs/readme/fleet.md), on real servers this benchmark starts: 3 hosts x 4 worker
// processes of one application, each host a mount namespace with a private /dev/shm (unshare -m, as root), each
// worker started with BULWARK_RULES only, under a steady load. For Redis and for etcd:
// - 100 changes written to the source: how long until all 12 workers obey each (goal: p50 <= 50 ms, p99 <= 250 ms);
// - the source killed for 60 s: no worker changes behaviour, no request fails; a host restarted meanwhile serves
//   its last good rules from disk; the source back: how long until every host hears it and obeys a change (1 s);
// - the watching worker of a host SIGKILLed: how long until another takes over (1 s), a change made meanwhile
//   obeyed by all.
// `--quick`: 20 changes, a 5 s outage (a smoke run: printed, not saved). Linux, as root (unshare); needs
// redis-server and etcd.
import { spawn } from 'child_process'
import * as fs from 'fs'
import { createRequire } from 'module'
import * as net from 'net'
import * as os from 'os'
import * as path from 'path'
import * as readline from 'readline'
import { fileURLToPath } from 'url'

import { writeTable } from './harness.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
// The fleet's internal modules, as tsc builds each (the workers load the package's entries).
const dist = path.join(here, '..', 'dist-internal')
const { openRuleSource } = require(path.join(dist, 'ops/fleet/open-source'))
const { editDocument } = require(path.join(dist, 'ops/fleet/source-edit'))
const { setComponent } = require(path.join(dist, 'ops/fleet/document-changes'))

const quick = process.argv.includes('--quick')
const CHANGES = quick ? 20 : 100
const OUTAGE_MS = quick ? 5_000 : 60_000
const HOSTS = 3
const WORKERS = 4
const NAMESPACE = 'fleet-bench'
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function freePort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const port = probe.address().port
      probe.close(() => resolve(port))
    })
  })
}

async function until(what, check, timeout = 30_000) {
  const giveUp = Date.now() + timeout
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > giveUp) throw new Error(`${what}: not within ${timeout} ms`)
    await sleep(2)
  }
}

/** A server process this benchmark owns: started, killed, started again on the same port and data. */
function server(name, args, answers) {
  let child
  return {
    async start() {
      child = spawn(name, args, { stdio: 'ignore' })
      await until(`${name} answering`, answers, 20_000)
    },
    async kill() {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGKILL')
      await exited
    },
  }
}

function answersTcp(port) {
  return () =>
    new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => resolve(socket.end() && true))
      socket.once('error', () => resolve(false))
    })
}

async function redisServer(dir) {
  const port = await freePort()
  // Appended and synced at every write: a SIGKILLed server comes back with the document.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes']
  const s = server('redis-server', [...args, '--appendfsync', 'always', '--save', ''], answersTcp(port))
  return { ...s, url: `redis://127.0.0.1:${port}/0` }
}

async function etcdServer(dir) {
  const [port, peer] = [await freePort(), await freePort()]
  const client = `http://127.0.0.1:${port}`
  const peerUrl = `http://127.0.0.1:${peer}`
  const args = ['--data-dir', path.join(dir, 'etcd'), '--listen-client-urls', client, '--advertise-client-urls', client]
  args.push(
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    `default=${peerUrl}`,
  )
  // Back when it serves (it accepts connections about a second before, while its member elects itself leader).
  const healthy = () =>
    fetch(`${client}/health`).then(
      (r) => r.text().then((t) => t.includes('"health":"true"')),
      () => false,
    )
  const s = server('etcd', [...args, '--log-level', 'error'], healthy)
  return { ...s, url: `etcd://127.0.0.1:${port}` }
}

/** The hosts: their workers' latest states, every state report kept with its time, load counts. */
function fleetOf(url, dir) {
  const hosts = new Map()
  const states = new Map() // pid -> latest state
  const history = [] // every state report
  const load = new Map() // pid -> { served, failed }
  const start = (name) => {
    const cache = path.join(dir, `cache-${name}`)
    const env = {
      ...process.env,
      BULWARK_RULES: url,
      BULWARK_NAMESPACE: NAMESPACE,
      BULWARK_RULES_CACHE: cache,
      BULWARK_HOST: name,
    }
    const script = `mount -t tmpfs tmpfs /dev/shm && hostname ${name} && exec "${process.execPath}" "${path.join(here, 'lib', 'fleet-host.mjs')}" ${WORKERS}`
    const child = spawn('unshare', ['-m', '-u', 'sh', '-c', script], { env, stdio: ['pipe', 'pipe', 'inherit'] })
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = JSON.parse(line)
      if (m.type === 'state') {
        states.set(m.pid, m)
        history.push(m)
      } else if (m.type === 'load') load.set(m.pid, m)
      else if (m.type === 'killed') {
        states.delete(m.pid)
        child.emit('killed', m.pid)
      }
    })
    hosts.set(name, child)
    return child
  }
  const stop = (name) => {
    const child = hosts.get(name)
    for (const [pid, s] of states) if (s.host === name) states.delete(pid)
    child.stdin.write('stop\n')
    hosts.delete(name)
    return new Promise((r) => child.once('exit', r))
  }
  const live = () => [...states.values()]
  return { hosts, states, history, load, start, stop, live }
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const ms = (v) => `${v.toFixed(1)} ms`
const goal = (value, bound) => `${ms(value)} (goal <= ${bound} ms: ${value <= bound ? 'met' : 'MISSED'})`

async function run(kind, make) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bulwark-fleet-bench-${kind}-`))
  const srv = await make(dir)
  await srv.start()
  const url = `${srv.url}${srv.url.includes('?') ? '&' : '?'}namespace=${NAMESPACE}`
  const { source } = openRuleSource(url, undefined)
  const meta = { author: 'bench' }
  let rate = 1000
  const change = async () => {
    rate++
    await editDocument(source, (d, m) => setComponent(d, 'token-bucket.gw', { rules: { rate } }, m), meta)
    return rate
  }
  const f = fleetOf(url, dir)
  const rows = []
  try {
    for (let h = 1; h <= HOSTS; h++) f.start(`host${h}`)
    await until(
      '12 workers, 3 watchers',
      () => f.live().length === HOSTS * WORKERS && f.live().filter((s) => s.watching).length === HOSTS,
    )
    await change()
    await until('the first rule obeyed', () => f.live().every((s) => s.rate === rate))

    // 1. Changes at the source, obeyed by every worker.
    const delays = []
    for (let i = 0; i < CHANGES; i++) {
      const t0 = now()
      const want = await change()
      await until(
        `change ${i} obeyed`,
        () => f.live().length === HOSTS * WORKERS && f.live().every((s) => s.rate === want),
        10_000,
      )
      const obeyed = f.live().map((s) => f.history.find((r) => r.pid === s.pid && r.rate === want).at)
      delays.push(Math.max(...obeyed) - t0)
      await sleep(20)
    }
    rows.push([
      kind,
      `a change obeyed by all ${HOSTS * WORKERS} workers, p50 (${CHANGES} changes)`,
      goal(percentile(delays, 50), 50),
    ])
    rows.push([kind, `the same, p99`, goal(percentile(delays, 99), 250)])
    rows.push([kind, 'the same, max', ms(Math.max(...delays))])

    // 2. The source killed under load.
    const servedBefore = [...f.load.values()].reduce((a, l) => a + l.served, 0)
    const changesBefore = f.history.length
    await srv.kill()
    const killedAt = now()
    await sleep(Math.min(2000, OUTAGE_MS / 2))
    // A host restarted during the outage.
    await f.stop('host3')
    f.start('host3')
    await until('host3 back', () => f.live().filter((s) => s.host === 'host3').length === WORKERS)
    const restarted = f.live().filter((s) => s.host === 'host3')
    await sleep(Math.max(0, OUTAGE_MS - (now() - killedAt)))
    const during = f.history.slice(changesBefore).filter((s) => s.host !== 'host3' && s.rate !== rate)
    const failed = [...f.load.values()].reduce((a, l) => a + l.failed, 0)
    const servedDuring = [...f.load.values()].reduce((a, l) => a + l.served, 0) - servedBefore
    rows.push([
      kind,
      `source killed ${OUTAGE_MS / 1000} s: workers that changed behaviour`,
      `${new Set(during.map((s) => s.pid)).size} (goal 0)`,
    ])
    rows.push([kind, 'the same: requests failed / served', `${failed} / ${servedDuring}`])
    rows.push([
      kind,
      'a host restarted meanwhile: workers serving the last good rules from disk',
      `${restarted.filter((s) => s.rate === rate && s.fromDisk).length} of ${WORKERS}`,
    ])
    await srv.start()
    const backAt = now()
    await until('every host hears the source', () => f.live().every((s) => s.sourceUp), 30_000)
    // When each worker first saw its host hear the source again (one that never saw it down: at once).
    const firstUp = (pid) => f.history.find((r) => r.pid === pid && r.sourceUp && r.at >= backAt - 1)?.at ?? backAt
    const heard = Math.max(...f.live().map((s) => firstUp(s.pid))) - backAt
    rows.push([kind, 'the source back (serving): every host hears it again', goal(Math.max(0, heard), 1000)])
    const t1 = now()
    const want = await change()
    await until('the change after the outage', () => f.live().every((s) => s.rate === want), 30_000)
    rows.push([
      kind,
      'then a change obeyed by all',
      goal(Math.max(...f.live().map((s) => f.history.find((r) => r.pid === s.pid && r.rate === want).at)) - t1, 1000),
    ])

    // 3. The watching worker killed.
    const host1 = f.hosts.get('host1')
    const killed = new Promise((r) => host1.once('killed', r))
    host1.stdin.write('kill-watcher\n')
    const killedPid = await killed
    const t2 = now()
    const during2 = await change()
    const next = await until('another watcher', () =>
      f.live().find((s) => s.host === 'host1' && s.watching && s.pid !== killedPid),
    )
    const takeover = next.at - t2
    await until('the change made meanwhile', () => f.live().every((s) => s.rate === during2), 10_000)
    rows.push([kind, 'watcher SIGKILLed: another takes over', goal(takeover, 1000)])
    rows.push([kind, 'the change made meanwhile, obeyed by the 11 left', 'yes'])
  } finally {
    for (const name of [...f.hosts.keys()]) await f.stop(name)
    await source.close()
    await srv.kill().catch(() => undefined)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

const rows = [...(await run('Redis', redisServer)), ...(await run('etcd', etcdServer))]
const load = os.loadavg()[0].toFixed(1)
writeTable('Fleet rules: 3 hosts x 4 workers', ['source', 'measure', 'result'], rows, {
  note: `Load average ${load} when it ended${quick ? ' (--quick: 20 changes, a 5 s outage)' : ''}: on a machine shared with other work these are provisional.`,
  save: !quick, // a smoke run prints its table and leaves the published one
})
process.exit(0)
