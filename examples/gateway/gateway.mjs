#!/usr/bin/env node
// An example API gateway on Fastify (docs/guide/integrations.md, "An example gateway"): one guard with a route table, an allow / deny list and
// bans, the IETF RateLimit headers, a readiness answer for the load balancer, a per-API-key limit shared by the
// fleet through Redis, and Prometheus metrics. One command starts it all:
//
//   npm run example:gateway            (or: node examples/gateway/gateway.mjs)
//
// It starts a private redis-server (unless REDIS_URL names one) and a small upstream (unless UPSTREAM_URL names
// one), then listens on PORT (default 8080; 0 picks a free port). Try:
//   curl -i localhost:8080/api/products/42          RateLimit and RateLimit-Policy headers, a proxied answer
//   curl -i localhost:8080/ready                    200 while the host keeps up, 503 once it has shed for a while
//   curl -s localhost:8080/metrics | grep bulwark_  the guard, the limiter, the Redis limiter
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { createServer as createNetServer } from 'node:net'

// The package's own entries, as an application imports them (Node resolves a package's own name inside it).
import { AccessList, KeyedLimiter } from 'bulwark'
import { fastifyGuard } from 'bulwark/fastify'
import { PrometheusMetrics } from 'bulwark/prometheus'
import { RedisRateLimiter } from 'bulwark/redis'

const require = createRequire(import.meta.url)
const Fastify = require('fastify')
const Redis = require('ioredis')
const { Registry } = require('prom-client')

const stops = []
const stopAll = async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
    probe.on('error', reject)
  })
}

/** REDIS_URL, or a private redis-server on a free loopback port (Debian: apt-get install redis-server). */
async function redisUrl() {
  if (process.env.REDIS_URL) return process.env.REDIS_URL
  const port = await freePort()
  const server = spawn('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ])
  server.on('error', (error) => {
    console.error(`gateway: cannot start redis-server (${error.message}); set REDIS_URL to a Redis of yours`)
    process.exit(1)
  })
  stops.push(() => server.kill())
  await new Promise((resolve) => {
    let said = ''
    server.stdout.on('data', (chunk) => (said += chunk).includes('Ready to accept connections') && resolve())
  })
  return `redis://127.0.0.1:${port}`
}

/** UPSTREAM_URL, or a small upstream: a JSON answer after a few ms of work. */
async function upstreamUrl() {
  if (process.env.UPSTREAM_URL) return process.env.UPSTREAM_URL
  const server = createServer((req, res) => {
    setTimeout(() => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ path: req.url, served: new Date().toISOString() }))
    }, 5)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  stops.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${server.address().port}`
}

const [redis, upstream] = [new Redis(await redisUrl(), { lazyConnect: false }), await upstreamUrl()]
stops.push(() => redis.quit())

// Every worker of the host shares these by name (one adaptive limiter, one list, the clients' limits).
const access = new AccessList({
  shared: 'gateway',
  entries: { '10.0.0.0/8': 'allow', '192.0.2.0/24': 'deny' }, // an internal network; a documentation range
})
const perClient = new KeyedLimiter({ rate: 50, burst: 100, shared: 'gateway-clients' })
const searchPerClient = new KeyedLimiter({ rate: 5, burst: 10, shared: 'gateway-search' })
// The fleet's limit per API key: 600 a minute across every host, decided in Redis (a local insurance when it fails).
const perApiKey = new RedisRateLimiter({ redis, limit: 600, window: 60_000 })
stops.push(
  () => perApiKey.close(),
  () => searchPerClient.close(),
  () => perClient.close(),
  () => access.close(),
)

const app = Fastify()
await app.register(fastifyGuard, {
  limiter: { shared: 'gateway' },
  rateLimit: { limiter: perClient, headers: true },
  access,
  bans: { after: 20, window: 10_000, duration: 60_000, shared: 'gateway' },
  readiness: true, // GET /ready
  routes: {
    'GET /health': 'skip',
    'GET /metrics': 'skip',
    'GET /api/search': { priority: 'low', rateLimit: { limiter: searchPerClient, headers: true } },
    'POST /api/checkout': {
      priority: 'critical',
      timeout: 2000,
      fallback: () => ({ status: 503, body: { error: 'checkout is busy, try again' } }),
    },
    '/api/products/:id': { priority: 'high' },
  },
})
stops.push(() => app.close())

// The fleet-wide limit, after the host's own checks: an API key's requests across every gateway.
app.addHook('preHandler', async (request, reply) => {
  if (!request.url.startsWith('/api/')) return
  const key = String(request.headers['x-api-key'] ?? 'anonymous')
  const decision = await perApiKey.consume(key)
  if (decision.allowed) return
  reply
    .code(429)
    .header('retry-after', Math.ceil(decision.retryAfterMs / 1000))
    .send({ error: 'api key limit' })
  return reply
})

// The upstream, through Node's fetch (bulwark/undici puts a breaker and a bulkhead per origin in front of it: see
// the integrations guide).
app.all('/api/*', async (request, reply) => {
  const answer = await fetch(upstream + request.url, { method: request.method })
  reply.code(answer.status).header('content-type', answer.headers.get('content-type') ?? 'text/plain')
  return answer.text()
})
app.get('/health', async () => ({ ok: true }))

const registry = new Registry()
const metrics = new PrometheusMetrics({ registry })
metrics.add('gateway', app.bulwark) // the guard: its refusals, its limiter
metrics.add('api-keys', perApiKey)
stops.push(() => metrics.close())
app.get('/metrics', async (_request, reply) =>
  reply.header('content-type', registry.contentType).send(await registry.metrics()),
)

const address = await app.listen({ port: Number(process.env.PORT ?? 8080), host: '127.0.0.1' })
console.log(`gateway listening on ${address} (upstream ${upstream})`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    void stopAll().then(() => process.exit(0))
  })
}
