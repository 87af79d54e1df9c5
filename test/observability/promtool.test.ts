// Prometheus's own linter on a real scrape of every kind of component (docs/metrics.md): `promtool check metrics`
// reads the exposition text and complains about names that break the conventions (a gauge ending in _count or
// _bucket, a counter without _total, units that are not base units...). .ci/run installs promtool (Debian's
// `prometheus`); elsewhere the test skips, saying why, unless BULWARK_REQUIRE_PROMTOOL=1.
import { spawnSync } from 'child_process'
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'

import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { drivenComponents } from './components'

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' })
const available = promtool.status === 0
const required = process.env.BULWARK_REQUIRE_PROMTOOL === '1'

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((c) => c()))

describe.skipIf(!available && !required)('promtool check metrics', () => {
  it('finds nothing to complain about in a scrape of every kind of component', async () => {
    expect(available, 'promtool is not installed (apt-get install prometheus)').toBe(true)
    const registry = new Registry()
    const metrics = new PrometheusMetrics({ registry })
    const c = drivenComponents()
    cleanups.push(c.close, () => metrics.close())
    const components = {
      api: c.limiter,
      payments: c.sre,
      orders: c.circuit,
      upstreams: c.group,
      products: c.topk,
      catalog: c.cache,
      login: c.bucket,
      signup: c.window,
      'per-client': c.keyed,
      retries: c.budget,
      edge: c.handler,
      outbound: c.bulkheads,
      tenants: c.perKey,
      items: c.hotParameters,
    }
    for (const [name, component] of Object.entries(components)) metrics.add(name, component)
    const text = await registry.metrics()
    const families = new Set(text.split('\n').filter((l) => l.startsWith('# TYPE ')))
    expect(families.size).toBeGreaterThan(30) // every family of the catalogue was scraped, not an empty page

    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
    expect({ status: check.status, complaints: `${check.stdout}${check.stderr}`.trim() }).toEqual({
      status: 0,
      complaints: '',
    })
  })
})
