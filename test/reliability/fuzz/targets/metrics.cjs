// The metric exporters of the subpaths bulwark/prometheus and bulwark/opentelemetry: any options, any component
// given to add(), and collection afterwards.
'use strict'
const path = require('path')
const { b, fc, assert, anySmall, key, options, typedOrValue, uniqueName } = require('../kit.cjs')

// The build the kit's components come from: the exporters know them by the classes registered there.
const dist = path.join(__dirname, '..', '..', '..', '..', 'dist-internal', 'ops', 'metrics')
const { PrometheusMetrics } = require(path.join(dist, 'prometheus.js'))
const { OpenTelemetryMetrics } = require(path.join(dist, 'opentelemetry.js'))
const promClient = require('prom-client')

const shared = uniqueName('fz-metrics')
const components = [
  new b.BbrLimiter({ queueDelay: false }),
  new b.SreBreaker({ shared }),
  new b.CircuitBreaker(),
  new b.HeavyKeeper({ k: 3 }),
  new b.HotKeyCache({ k: 3 }),
  new b.TokenBucket({ rate: 5 }),
  new b.SlidingWindowLimiter({ limit: 5, window: 100 }),
  new b.KeyedLimiter(() => new b.TokenBucket({ rate: 1 })),
  new b.BreakerGroup(() => new b.SreBreaker()),
  b.httpGuard(() => undefined, { limiter: false }),
]
components[3].add('k')
const component = fc.oneof(fc.constantFrom(...components), anySmall)
const FIELDS = ['registry', 'meter', 'prefix', 'topKeys', 'groupKeys']
const common = {
  prefix: fc.oneof(fc.constantFrom('bulwark_', 'app:', '', '1bad'), key),
  topKeys: fc.nat(20),
  groupKeys: fc.nat(20),
}

module.exports = [
  {
    name: 'PrometheusMetrics: any options and components give metrics or typed errors; collecting never throws',
    runs: 500,
    property: fc.asyncProperty(
      options({ ...common, registry: fc.constant(null).map(() => new promClient.Registry()) }),
      fc.array(fc.tuple(fc.oneof(key, anySmall), component), { maxLength: 6 }),
      async (o, adds) => {
        const metrics = typedOrValue(() => new PrometheusMetrics(o), { fields: FIELDS, given: o }).value
        if (!metrics) return
        const disposables = []
        for (const [name, c] of adds) {
          const r = typedOrValue(() => metrics.add(name, c), { argumentsNamed: ['name', 'component'] })
          if (r.value) disposables.push(r.value)
        }
        const registry =
          o && typeof o === 'object' && o.registry instanceof promClient.Registry ? o.registry : promClient.register
        const text = await registry.metrics()
        assert.equal(typeof text, 'string')
        for (const d of disposables) d.dispose()
        metrics.close()
        if (registry !== promClient.register) registry.clear()
      },
    ),
  },
  {
    name: 'OpenTelemetryMetrics: any options and components give metrics or typed errors',
    runs: 500,
    property: fc.property(
      options(common),
      fc.array(fc.tuple(fc.oneof(key, anySmall), component), { maxLength: 6 }),
      (o, adds) => {
        const metrics = typedOrValue(() => new OpenTelemetryMetrics(o), { fields: FIELDS, given: o }).value
        if (!metrics) return
        for (const [name, c] of adds)
          typedOrValue(() => metrics.add(name, c), { argumentsNamed: ['name', 'component'] })
        metrics.close()
      },
    ),
    after: () => {
      for (const c of components) (c.guard ?? c).close?.()
    },
  },
]
