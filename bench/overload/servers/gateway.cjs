// A gateway in front of one or more upstreams: a node:http server that forwards GET <route>/... to the upstream of
// that route (UPSTREAMS, a JSON map of route prefix to port) and relays the answer, 502 on an upstream error.
// MODE picks the inbound protection: none | bulwark (httpGuard(forward, { trustPriority }), else the defaults) |
// bulwark-no-latency (the same with the latency rule off: what bulwark did before it) | overload-protection |
// gradient2 | vegas (Netflix concurrency-limits' algorithms, see netflix-limits.cjs).
// OUTBOUND picks the client: http (a keep-alive node:http Agent) | undici (an undici Agent) | undici-guard (an
// undici Agent composed with undiciGuard(), the defaults). GET /__stats tells what the protection saw.
// Prints its port once it listens.
'use strict'
const http = require('http')
const { httpGuard } = require('../../../dist/cjs/entries/http')

const MODE = process.env.MODE ?? 'none'
const OUTBOUND = process.env.OUTBOUND ?? 'http'
const upstreams = Object.entries(JSON.parse(process.env.UPSTREAMS ?? '{"/":0}')).sort(
  (a, b) => b[0].length - a[0].length,
)
const portOf = (url) => (upstreams.find(([prefix]) => url.startsWith(prefix)) ?? upstreams[0])[1]

/** The newest undici this Node runs (undici 8 wants Node 22.19; the dev dependencies alias 7 and 6 too). */
function loadUndici() {
  for (const name of ['undici', 'undici-v7', 'undici-v6']) {
    try {
      return require(name)
    } catch {
      // not for this Node: the next one
    }
  }
  throw new Error('no undici that runs on this Node')
}

function fail(res, status, body) {
  if (res.headersSent) return res.destroy()
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

let forward
let outboundStats = () => undefined
if (OUTBOUND === 'http') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  forward = (req, res) => {
    const up = http.request({ host: '127.0.0.1', port: portOf(req.url), path: req.url, agent }, (answer) => {
      res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] ?? 'text/plain' })
      answer.pipe(res)
    })
    up.on('error', () => fail(res, 502, '{"error":"bad gateway"}'))
    res.on('close', () => {
      if (!res.writableFinished) up.destroy() // the client gave up: so does the gateway
    })
    up.end()
  }
} else {
  const { Agent, request } = loadUndici()
  let dispatcher = new Agent({ keepAliveTimeout: 60_000 })
  if (OUTBOUND === 'undici-guard') {
    const { undiciGuard } = require('../../../dist/cjs/entries/undici')
    const guard = undiciGuard()
    dispatcher = dispatcher.compose(guard)
    outboundStats = () => {
      const byOrigin = {}
      guard.bulkheads.forEach((bulkhead, origin) => (byOrigin[origin] = bulkhead.stats()))
      return byOrigin
    }
  }
  forward = (req, res) => {
    const controller = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) controller.abort()
    })
    request(`http://127.0.0.1:${portOf(req.url)}${req.url}`, { dispatcher, signal: controller.signal }).then(
      async (answer) => {
        const body = await answer.body.text()
        res.writeHead(answer.statusCode, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) })
        res.end(body)
      },
      (error) => {
        const refused = error?.code === 'ERR_BULWARK_BULKHEAD_REJECTED' || error?.code === 'ERR_BULWARK_BREAKER_OPEN'
        fail(res, refused ? 503 : 502, refused ? '{"error":"upstream saturated"}' : '{"error":"bad gateway"}')
      },
    )
  }
}

let handler = forward
let inboundStats = () => undefined
if (MODE === 'bulwark' || MODE === 'bulwark-no-latency') {
  // The load generator marks every tenth request `x-priority: critical`; it is the only client, on loopback, so the
  // gateway trusts the header from there (docs/guide/trust.md): any other client's header is ignored.
  const trustPriority = (req) => req.socket.remoteAddress === '127.0.0.1'
  const maxWait = process.env.MAX_WAIT === undefined ? undefined : Number(process.env.MAX_WAIT)
  const options = { trustPriority, ...(maxWait !== undefined && { maxWait }) }
  handler = httpGuard(forward, MODE === 'bulwark' ? options : { ...options, limiter: { latency: false } })
  inboundStats = () => handler.guard.stats().limiter
} else if (MODE === 'gradient2' || MODE === 'vegas') {
  const { netflixLimiter } = require('./netflix-limits.cjs')
  const limiter = netflixLimiter(MODE)
  handler = (req, res) => {
    const start = limiter.tryAcquire()
    if (start < 0) return fail(res, 503, '{"error":"overloaded"}')
    res.on('close', () => limiter.release(start, res.writableFinished && res.statusCode < 500))
    forward(req, res)
  }
  inboundStats = limiter.stats
} else if (MODE === 'overload-protection') {
  const protect = require('overload-protection')('http', { production: true, logging: false, clientRetrySecs: 1 })
  handler = (req, res) => {
    if (protect(req, res) !== true) forward(req, res)
  }
}

const server = http.createServer((req, res) => {
  if (req.url === '/__stats') return res.end(JSON.stringify({ inbound: inboundStats(), outbound: outboundStats() }))
  handler(req, res)
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
