// What observing bulwark costs: nothing per request (the exporters read each component's stats() when scraped),
// against instrumenting every request with prom-client, the usual way; then what one scrape and one `bulwark top`
// frame cost as the number of components grows.
import { createRequire } from 'module'
import { measure, writeTable } from './harness.mjs'

const require = createRequire(import.meta.url)
const { BbrLimiter, HeavyKeeper, SreBreaker } = require('../dist/cjs')
const { inspectRegions } = require('../dist/cjs/entries/top')
const { PrometheusMetrics } = require('../dist/cjs/ops/metrics/prometheus')
const { Counter, Histogram, Registry } = require('prom-client')

const registry = new Registry()
const metrics = new PrometheusMetrics({ registry })
const observed = new BbrLimiter()
metrics.add('observed', observed)
const eager = new BbrLimiter()
const requests = new Counter({
  name: 'requests_total',
  help: 'requests',
  labelNames: ['route', 'outcome'],
  registers: [registry],
})
const latency = new Histogram({
  name: 'request_seconds',
  help: 'latency',
  labelNames: ['route'],
  registers: [registry],
})

await measure('Observability: per-request cost of being observed', [
  {
    name: 'tryAcquire+release, exported by PrometheusMetrics (read at scrape)',
    fn: () => observed.release(observed.tryAcquire()),
    baseline: true,
  },
  {
    name: 'tryAcquire+release + prom-client counter.inc per request',
    fn: () => {
      const token = eager.tryAcquire()
      requests.inc({ route: '/', outcome: token >= 0 ? 'admitted' : 'shed' })
      eager.release(token)
    },
  },
  {
    name: 'tryAcquire+release + counter.inc + histogram.observe per request',
    fn: () => {
      const start = performance.now()
      const token = eager.tryAcquire()
      requests.inc({ route: '/', outcome: token >= 0 ? 'admitted' : 'shed' })
      eager.release(token)
      latency.observe({ route: '/' }, (performance.now() - start) / 1000)
    },
  },
])

// Scrape and `top` cost: n limiters, n breakers and n top-ks, shared (so that `top` sees them too).
function timeMs(fn, rounds) {
  const start = performance.now()
  for (let i = 0; i < rounds; i++) fn()
  return (performance.now() - start) / rounds
}
async function timeAsyncMs(fn, rounds) {
  const start = performance.now()
  for (let i = 0; i < rounds; i++) await fn()
  return (performance.now() - start) / rounds
}
const rows = []
for (const n of [1, 10, 100]) {
  const reg = new Registry()
  const m = new PrometheusMetrics({ registry: reg })
  const base = `bench-obs-${process.pid}-${n}`
  const parts = []
  for (let i = 0; i < n; i++) {
    const limiter = new BbrLimiter({ shared: `${base}-${i}` })
    const breaker = new SreBreaker({ shared: `${base}-${i}` })
    const topk = new HeavyKeeper({ shared: `${base}-${i}`, k: 10 })
    for (let j = 0; j < 100; j++) topk.add(`key-${j % 20}`)
    m.add(`l${i}`, limiter)
    m.add(`b${i}`, breaker)
    m.add(`k${i}`, topk)
    parts.push(limiter, breaker, topk)
  }
  await reg.metrics() // warm
  const scrape = await timeAsyncMs(() => reg.metrics(), 20)
  const lines = (await reg.metrics()).split('\n').filter((l) => l && !l.startsWith('#')).length
  const top = timeMs(() => inspectRegions({ names: [`${base}-*`] }), 20)
  rows.push([String(3 * n), String(lines), `${scrape.toFixed(2)} ms`, `${top.toFixed(2)} ms`])
  m.close()
  for (const p of parts) p.close()
}
writeTable(
  'Observability: one Prometheus scrape and one bulwark top frame',
  ['components (limiters + breakers + top-ks)', 'series', 'registry.metrics()', 'inspectRegions (top frame)'],
  rows,
)
