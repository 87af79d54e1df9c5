// A demo HTTP worker (node:cluster). Protected, each request goes through one BbrLimiter shared by every worker
// (priority from the route, as the application decides it: never from a header a client can send), a HotKeyCache
// in front of the slow lookup (hotness decided host-wide) and an SreBreaker in front of the flaky downstream;
// unprotected, it does the same work with none of them. The primary switches modes over IPC; the worker reports
// what it answered every half second.
'use strict'
const http = require('http')
const { BbrLimiter, HotKeyCache, SreBreaker } = require('../../dist/cjs')
const { burn, flakyDownstream, slowLookup } = require('./services.cjs')

const name = process.env.BULWARK_DEMO_NAME
const limiter = new BbrLimiter({ shared: name })
const cache = new HotKeyCache({ shared: name, k: 50, capacity: 1000, ttl: 2000, fadeEvery: 5000 })
// Rejected calls are not counted as failures, so that the breaker lets calls through again within one window of
// the downstream's recovery (counting them keeps it shut for many windows at this traffic).
const breaker = new SreBreaker({ shared: name, window: 2000, buckets: 10, minimumCalls: 20, countRejections: false })
const failure = { failFrom: Infinity, failTo: Infinity }
const downstream = flakyDownstream(failure)
let protect = false
const counts = { ok: 0, shed: 0, broken: 0, failed: 0, cacheHits: 0, lookups: 0 }

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 503 ? { 'retry-after': '1' } : {}) })
  res.end(JSON.stringify(body))
}

async function handle(key, res) {
  burn(2) // routing, auth, rendering
  counts.lookups++
  let item = protect ? cache.get(key) : undefined
  if (item !== undefined) {
    counts.cacheHits++
    cache.add(key)
  } else {
    item = await slowLookup(key)
    if (protect) cache.addWithValue(key, item)
  }
  if (protect && !breaker.tryAcquire()) {
    counts.broken++
    return reply(res, 503, { error: 'downstream unavailable', item })
  }
  try {
    await downstream()
    if (protect) breaker.recordSuccess()
  } catch {
    if (protect) breaker.recordFailure()
    counts.failed++
    return reply(res, 502, { error: 'downstream failed', item })
  }
  counts.ok++
  reply(res, 200, item)
}

// The request's class, decided by the application: checkout pages are critical. The load generator also sends
// `x-priority: critical` on them, which is ignored: any client could send it (docs/guide/trust.md).
const priorityOf = (req) => (req.url.startsWith('/checkout/') ? 'critical' : 'normal')

const server = http.createServer((req, res) => {
  const route = /^\/(item|checkout)\//.exec(req.url)
  const key = route ? req.url.slice(route[0].length) : 'home'
  if (!protect) return void handle(key, res)
  const token = limiter.tryAcquire(priorityOf(req))
  if (token < 0) {
    counts.shed++
    return reply(res, 503, { error: 'overloaded' })
  }
  let released = false
  const release = () => {
    if (released) return
    released = true
    limiter.release(token)
  }
  res.once('finish', release)
  res.once('close', release)
  handle(key, res)
})
server.keepAliveTimeout = 60_000

process.on('message', (m) => {
  if (m.op === 'mode') {
    protect = m.protect
    failure.failFrom = m.failFrom
    failure.failTo = m.failTo
  }
  process.send({ op: 'done', counts })
})
const report = setInterval(() => process.send({ op: 'counts', counts }), 500)
process.on('disconnect', () => {
  clearInterval(report)
  limiter.close()
  cache.close()
  breaker.close()
  server.close()
  setImmediate(() => process.exit(0))
})
server.listen(Number(process.env.BULWARK_DEMO_PORT), '127.0.0.1')
