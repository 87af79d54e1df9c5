// What the inbound adapters cost per request, over real sockets: each case is a server in a child process (one
// core) driven by this process over keep-alive connections (the other core). The server measures its own CPU time
// per request (process.cpuUsage over the measured seconds / requests served), which is what the adapter adds to,
// whether or not the client is the bottleneck; requests per second are reported too. The limiters are set so that
// they admit everything (no shedding makes a case look cheaper): the admit path, with its release, is measured.
//   node bench/integrations.bench.mjs [seconds per round, default 2] [rounds, default 3]
import { fork } from 'child_process'
import { createRequire } from 'module'
import { fileURLToPath } from 'url'

import { onFreshRequest } from './fresh-http.mjs'
import { measure, peer, writeTable } from './harness.mjs'

const require = createRequire(import.meta.url)
const self = fileURLToPath(import.meta.url)
// BULWARK_DIST: a copy of dist/cjs to measure (the tree's own dist is rebuilt by every test run on a shared machine).
const loadBulwark = () => {
  const dist = process.env.BULWARK_DIST ?? '../dist/cjs'
  const entries = ['', '/entries/http', '/entries/express', '/entries/koa', '/entries/fastify']
  return Object.assign({}, ...entries.map((entry) => require(`${dist}${entry}`)))
}

// Admit everything: no in-flight floor reachable, no queueing-delay rule; the load signal is still read.
const admitAll = { minInFlight: 1_000_000, queueDelay: false }

const cases = {
  'node:http, bare handler': (bulwark, hello) => require('http').createServer(hello),
  'node:http + httpGuard (BBR)': (b, hello) => require('http').createServer(b.httpGuard(hello, { limiter: admitAll })),
  'node:http + httpGuard (BBR + per-client token bucket)': (b, hello) => {
    const perClient = new b.KeyedLimiter(() => new b.TokenBucket({ rate: 1e9 }))
    return require('http').createServer(b.httpGuard(hello, { limiter: admitAll, rateLimit: { limiter: perClient } }))
  },
  'node:http + overload-protection': (b, hello) => {
    const protect = require('overload-protection')('http', {
      production: true,
      logging: false,
      maxEventLoopDelay: 1e9,
      maxHeapUsedBytes: 0,
      maxRssBytes: 0,
    })
    return require('http').createServer((req, res) => protect(req, res) === true || hello(req, res))
  },
  'express, bare': (b, hello) => require('http').createServer(require('express')().use(hello)),
  'express + expressGuard': (b, hello) =>
    require('http').createServer(
      require('express')()
        .use(b.expressGuard({ limiter: admitAll }))
        .use(hello),
    ),
  'fastify, bare': () => fastify(false),
  'fastify + fastifyGuard': () => fastify(true),
  'koa, bare': (b) => require('http').createServer(koa(b, false).callback()),
  'koa + koaGuard': (b) => require('http').createServer(koa(b, true).callback()),
}

function fastify(guarded) {
  const app = require('fastify')()
  if (guarded) app.register(loadBulwark().fastifyGuard, { limiter: admitAll })
  app.get('/', (_req, reply) => reply.send('hello'))
  return app
}

function koa(b, guarded) {
  const Koa = require('koa')
  const app = new Koa()
  if (guarded) app.use(b.koaGuard({ limiter: admitAll }))
  app.use((ctx) => {
    ctx.body = 'hello'
  })
  return app
}

// ---- server side (child process): argv[2] = case name ----
async function serve(name) {
  const bulwark = loadBulwark()
  const hello = (_req, res) => res.end('hello')
  const made = cases[name](bulwark, hello)
  let port
  if (typeof made.listen === 'function' && made.server) {
    await made.listen({ port: 0, host: '127.0.0.1' })
    port = made.server.address().port
  } else {
    made.keepAliveTimeout = 60_000
    await new Promise((r) => made.listen(0, '127.0.0.1', r))
    port = made.address().port
  }
  let served = 0
  const countServed = (server) => server.on('request', (_req, res) => res.on('finish', () => served++))
  countServed(made.server ?? made)
  let cpu
  let from
  process.on('message', (m) => {
    if (m === 'start') {
      served = 0
      cpu = process.cpuUsage()
      from = performance.now()
    } else if (m === 'stop') {
      const used = process.cpuUsage(cpu)
      process.send({ served, cpuMicros: used.user + used.system, ms: performance.now() - from })
    }
  })
  process.send({ port })
}

// ---- client side (this process) ----
async function drive(name, seconds) {
  const { Pool } = require('undici')
  const child = fork(self, [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const next = () => new Promise((resolve) => child.once('message', resolve))
  const { port } = await next()
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32, pipelining: 1 })
  const statuses = new Map()
  let running = true
  let completed = 0
  const loop = async () => {
    while (running) {
      const res = await pool.request({ path: '/', method: 'GET' })
      await res.body.dump()
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      completed++
    }
  }
  const loops = Array.from({ length: 64 }, loop)
  await new Promise((r) => setTimeout(r, 1000)) // warm-up
  child.send('start')
  const before = completed
  await new Promise((r) => setTimeout(r, seconds * 1000))
  child.send('stop')
  const counted = completed - before
  const server = await next()
  running = false
  await Promise.all(loops)
  await pool.close()
  child.kill()
  const non200 = [...statuses].filter(([s]) => s !== 200).reduce((n, [, c]) => n + c, 0)
  return { rps: (counted * 1000) / server.ms, cpuPerRequest: server.cpuMicros / server.served, non200 }
}

// In-process: the adapter's own work per request (acquire, two listeners, release when the response ends), as the
// difference between a wrapped and a bare listener on fresh node:http request/response objects (bench/fresh-http.mjs).
async function perRequestCost() {
  const b = loadBulwark()
  const hello = (_req, res) => res.statusCode
  const run = onFreshRequest
  const perClient = new b.KeyedLimiter(() => new b.TokenBucket({ rate: 1e12 }))
  const shedding = b.httpGuard(hello, { limiter: { signal: () => 1000, minInFlight: 0 } })
  shedding.guard.limiter.tryAcquire('critical') // two in flight, limit 0: every request is shed
  shedding.guard.limiter.tryAcquire('critical')
  const shedOnly = (req, res) => {
    res.writeHead = () => res // the reply itself is node:http's work, the same with or without bulwark
    res.end = () => res
    shedding(req, res)
  }
  await measure("Inbound adapters: the wrapper's own cost per request (node:http objects, no socket)", [
    { name: 'bare listener', fn: run(hello), baseline: true },
    { name: 'httpGuard (BBR), admitted', fn: run(b.httpGuard(hello, { limiter: admitAll })) },
    {
      name: 'httpGuard (BBR + per-client token bucket), admitted',
      fn: run(b.httpGuard(hello, { limiter: admitAll, rateLimit: { limiter: perClient } })),
    },
    { name: 'httpGuard (BBR), shed (reply stubbed)', fn: run(shedOnly) },
  ])
}

if (process.argv[2] && cases[process.argv[2]]) {
  await serve(process.argv[2])
} else {
  const seconds = Number(process.argv[2] ?? 2)
  const rounds = Number(process.argv[3] ?? 3)
  await perRequestCost()
  // Rounds interleave the cases, so that a noisy neighbour hits them all; each case keeps its median round.
  const runs = new Map(Object.keys(cases).map((name) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const name of Object.keys(cases)) runs.get(name).push(await drive(name, seconds))
  }
  const median = (list, key) => list.map((r) => r[key]).sort((x, y) => x - y)[Math.floor(list.length / 2)]
  const results = [...runs].map(([name, list]) => ({
    name,
    rps: median(list, 'rps'),
    cpuPerRequest: median(list, 'cpuPerRequest'),
    non200: list.reduce((n, r) => n + r.non200, 0),
  }))
  const baseOf = (name) =>
    results.find(
      (r) => r.name === (name.startsWith('node:http') ? 'node:http, bare handler' : `${name.split(/[ ,]/)[0]}, bare`),
    )
  const lines = results.map((r) => {
    const base = baseOf(r.name)
    const added = r.cpuPerRequest - base.cpuPerRequest
    return [
      r.name,
      `${Math.round(r.rps).toLocaleString('en-US')}`,
      `${r.cpuPerRequest.toFixed(1)} µs`,
      r === base
        ? ''
        : `${added >= 0 ? '+' : ''}${added.toFixed(2)} µs (${((added / base.cpuPerRequest) * 100).toFixed(1)} %)`,
      String(r.non200),
    ]
  })
  writeTable(
    `Inbound adapters: server CPU per request over keep-alive (median of ${rounds} rounds)`,
    ['case', 'req/s', 'server CPU per request', 'added to the bare framework', 'non-200'],
    lines,
    { peers: ['overload-protection', 'express', 'fastify', 'koa'].map(peer) },
  )
}
