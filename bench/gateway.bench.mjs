// What the gateway options cost (docs/guide/gateway.md), in ns per request, in one process: the route table's
// look-up with the guard's decision beside the decision alone (goal: at most 1.2x), matching a client against
// 100 000 ranges (goal: at most 100 ns), and the rate limit's header fields off, beside no rate-limit headers option
// at all (goal: the same within noise). Peers: find-my-way (Fastify's router) for a route look-up alone, proxy-addr
// (Express's `trust proxy` matcher, on ipaddr.js) for matching an address against a list.
//   node bench/gateway.bench.mjs
import { createRequire } from 'module'
import { onFreshRequest } from './fresh-http.mjs'
import { do_not_optimize, measure, peer, writeTable } from './harness.mjs'

const require = createRequire(import.meta.url)
const dist = process.env.BULWARK_DIST ?? '../dist/cjs'
const { AccessList, KeyedLimiter } = require(dist)
const { InboundGuard, httpGuard } = require(`${dist}/entries/http`)

// A deterministic random source (a 32-bit LCG): the same lists and requests on every run.
let seed = 12345
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32
const int = (n) => Math.floor(random() * n)

// ---- Routes ----------------------------------------------------------------------------------------------------
// A gateway's table: 50 routes, static and with parameters, some for one method, a wildcard, a skipped health check.
const resources = [
  'users',
  'orders',
  'carts',
  'products',
  'search',
  'payments',
  'invoices',
  'reviews',
  'stores',
  'tags',
]
const routes = { 'GET /health': 'skip', '/static/*': { priority: 'low' } }
for (const r of resources) {
  routes[`GET /api/v1/${r}`] = { priority: 'normal' }
  routes[`POST /api/v1/${r}`] = { priority: 'high' }
  routes[`GET /api/v1/${r}/:id`] = { priority: 'normal' }
  routes[`PUT /api/v1/${r}/:id`] = { priority: 'high' }
}
for (const r of resources.slice(0, 8)) routes[`/api/v1/${r}/:id/history`] = { priority: 'low' }
// 64 requests, most of them for routes with a parameter, cycled so that no look-up meets the URL it met last.
const requests = Array.from({ length: 64 }, (_, i) => {
  const r = resources[i % resources.length]
  const url =
    i % 4 === 0
      ? `/api/v1/${r}?page=${i}`
      : i % 4 === 1
        ? `/api/v1/${r}/${1000 + i}/history`
        : `/api/v1/${r}/${1000 + i}`
  return { method: i % 8 === 3 ? 'PUT' : 'GET', url, address: `10.0.${i}.7` }
})
let r = 0
const nextRequest = () => requests[(r = (r + 1) & 63)]
const access = {
  header: () => undefined,
  address: (q) => q.address,
  method: (q) => q.method,
  url: (q) => q.url,
}
const admitAll = { minInFlight: 1_000_000, queueDelay: false }
const perClient = () => new KeyedLimiter({ rate: 1e6, burst: 1e6, maxKeys: 1024 })
const guards = {
  alone: new InboundGuard({ limiter: admitAll }, access),
  routed: new InboundGuard({ limiter: admitAll, routes }, access),
  rateAlone: new InboundGuard({ limiter: admitAll, rateLimit: { limiter: perClient() } }, access),
  rateRouted: new InboundGuard({ limiter: admitAll, rateLimit: { limiter: perClient() }, routes }, access),
  // The route its framework matched (Fastify's route config, with its policy in `bulwark`): no look-up of ours.
  framework: new InboundGuard({ limiter: admitAll }, { ...access, route: (q) => q.config }),
}
const configs = Object.values(routes)
  .filter((policy) => policy !== 'skip')
  .map((bulwark) => ({ bulwark }))
for (const [i, config] of configs.entries()) guards.framework.declareRoute(config, `/r${i}`, 'GET')
for (const [i, q] of requests.entries()) q.config = configs[(i * 7) % configs.length]
const decide = (guard) => () => {
  const t = guard.tryAcquire(nextRequest())
  guard.release(t)
  return do_not_optimize(t)
}
const router = require('find-my-way')()
for (const name of Object.keys(routes)) {
  const [method, path] = name.includes(' ') ? name.split(' ') : [['GET', 'PUT', 'POST'], name]
  router.on(method, path.replace(':id', ':id'), () => undefined)
}
const routeRows = await measure(
  'Route table: a look-up with the guard’s decision, 50 routes',
  [
    { name: 'guard decision (BBR), no routes', fn: decide(guards.alone), baseline: true },
    { name: 'guard decision (BBR) + route look-up', fn: decide(guards.routed) },
    { name: 'guard decision (BBR) + the framework’s route (Fastify config.bulwark)', fn: decide(guards.framework) },
    { name: 'guard decision (BBR + per-client rate limit), no routes', fn: decide(guards.rateAlone) },
    { name: 'guard decision (BBR + per-client rate limit) + route look-up', fn: decide(guards.rateRouted) },
    {
      name: 'find-my-way look-up alone (Fastify’s router)',
      fn: () => {
        const q = nextRequest()
        return do_not_optimize(router.find(q.method, q.url))
      },
    },
  ],
  { peers: [peer('find-my-way')] },
)

// ---- Access lists ----------------------------------------------------------------------------------------------
const RANGES = 100_000
const v4 = (n) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')
const entries4 = {}
for (let n = 0; n < RANGES;) {
  const prefix = [16, 20, 24, 24, 28, 32][int(6)]
  const size = 2 ** (32 - prefix)
  const entry = `${v4(Math.floor(int(2 ** 32) / size) * size)}/${prefix}`
  if (!(entry in entries4)) n++
  entries4[entry] = random() < 0.5 ? 'deny' : 'allow'
}
const hex = () => int(65536).toString(16)
const entries6 = {}
for (let n = 0; n < RANGES;) {
  const prefix = [32, 48, 56, 64, 64, 128][int(6)]
  const groups = [hex(), hex(), hex(), hex(), hex(), hex(), hex(), hex()]
  // Host bits zero: whole groups past the prefix, and the low bits of a group it cuts (a /56).
  const whole = Math.floor(prefix / 16)
  const cut = prefix % 16
  if (cut > 0) groups[whole] = (parseInt(groups[whole], 16) & (0xffff << (16 - cut)) & 0xffff).toString(16)
  for (let g = cut > 0 ? whole + 1 : whole; g < 8; g++) groups[g] = '0'
  const entry = `${groups.join(':')}/${prefix}`
  if (!(entry in entries6)) n++
  entries6[entry] = random() < 0.5 ? 'deny' : 'allow'
}
const compileMs = {}
const timed = (name, make) => {
  const start = performance.now()
  const list = make()
  list.stats() // compiled
  compileMs[name] = performance.now() - start
  return list
}
const list4 = timed('IPv4', () => new AccessList({ maxEntries: RANGES, entries: entries4 }))
const list6 = timed('IPv6', () => new AccessList({ maxEntries: RANGES, entries: entries6 }))
// 1024 addresses of each family, fresh strings (not the one the list matched last).
const probes4 = Array.from({ length: 1024 }, () => v4(int(2 ** 32)))
const probes6 = Array.from({ length: 1024 }, () => `2001:db8:${hex()}:${hex()}::${hex()}`)
let p = 0
const next4 = () => probes4[(p = (p + 1) & 1023)]
const next6 = () => probes6[(p = (p + 1) & 1023)]
const proxyAddr = require('proxy-addr')
const trust1000 = proxyAddr.compile(Object.keys(entries4).slice(0, 1000))
await measure(
  'Access lists: matching a client’s address against 100 000 ranges',
  [
    {
      name: 'AccessList, IPv4, 100 000 ranges',
      fn: () => do_not_optimize(list4.matchAddress(next4())),
      baseline: true,
      target: 100,
    },
    { name: 'AccessList, IPv6, 100 000 ranges', fn: () => do_not_optimize(list6.matchAddress(next6())), target: 100 },
    {
      name: 'AccessList, the address it matched last (keep-alive)',
      fn: () => do_not_optimize(list4.matchAddress(probes4[0])),
    },
    { name: 'proxy-addr compiled list, IPv4, 1 000 ranges', fn: () => do_not_optimize(trust1000(next4(), 0)) },
  ],
  { peers: [peer('proxy-addr'), peer('ipaddr.js')] },
)
writeTable(
  'Access lists: compiling 100 000 ranges (once per change, in each process)',
  ['family', 'ms'],
  [
    ['IPv4', compileMs.IPv4.toFixed(1)],
    ['IPv6', compileMs.IPv6.toFixed(1)],
  ],
)

// ---- Rate-limit headers ----------------------------------------------------------------------------------------
const hello = (_req, res) => res.statusCode
const run = onFreshRequest
const withHeaders = (headers) =>
  run(
    httpGuard(hello, {
      limiter: admitAll,
      rateLimit: { limiter: perClient(), ...(headers === undefined ? {} : { headers }) },
    }),
  )
await measure('Rate-limit headers: httpGuard per request, headers off and on', [
  { name: 'no headers option', fn: withHeaders(undefined), baseline: true },
  { name: 'headers: false', fn: withHeaders(false) },
  { name: 'headers: true (RateLimit, RateLimit-Policy)', fn: withHeaders(true) },
  { name: "headers: 'legacy' (X-RateLimit-*)", fn: withHeaders('legacy') },
])

const ratio = (a, b) => routeRows.find((x) => x.name === a).ns / routeRows.find((x) => x.name === b).ns
const goal = (value, limit) => `${value.toFixed(2)}x (goal <= ${limit}x: ${value <= limit ? 'met' : 'MISSED'})`
writeTable(
  'Route table: the goal, look-up with decision over decision alone',
  ['guard', 'ratio'],
  [
    ['BBR', goal(ratio('guard decision (BBR) + route look-up', 'guard decision (BBR), no routes'), 1.2)],
    [
      'BBR, the framework’s route',
      goal(
        ratio(
          'guard decision (BBR) + the framework’s route (Fastify config.bulwark)',
          'guard decision (BBR), no routes',
        ),
        1.2,
      ),
    ],
    [
      'BBR + per-client rate limit',
      goal(
        ratio(
          'guard decision (BBR + per-client rate limit) + route look-up',
          'guard decision (BBR + per-client rate limit), no routes',
        ),
        1.2,
      ),
    ],
  ],
)
for (const g of Object.values(guards)) g.close()
list4.close()
list6.close()
