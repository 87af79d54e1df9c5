// What tracing the inbound guard's decisions costs (docs/guide/observability.md, "Traces"): the guard's decision
// alone, beside the same guard added to OpenTelemetryTraces while no OpenTelemetry SDK is started (no context
// manager: the traces ask the API nothing per decision), and with an SDK started and a recording span active (each
// shed then adds a span event). The admit path has no trace call; its rows show that.
import * as fs from 'fs'
import { createRequire } from 'module'
import * as path from 'path'
import { measure } from './harness.mjs'

const require = createRequire(import.meta.url)
const { BbrLimiter } = require('../dist/cjs')
const { InboundGuard } = require('../dist/cjs/entries/http')
const { OpenTelemetryTraces } = require('../dist/cjs/ops/metrics/opentelemetry')
// The trace SDK 2 and its API 1.9 (test/peers/otel-sdk-trace-v2): SDK 3 needs Node 22.15.
const { api, sdk, contextManager } = require('otel-sdk-trace-v2')
const peers = ['@opentelemetry/api', '@opentelemetry/sdk-trace-base'].map((name) => {
  const manifest = path.join(path.dirname(require.resolve('otel-sdk-trace-v2')), 'node_modules', name, 'package.json')
  return `${name} ${JSON.parse(fs.readFileSync(manifest, 'utf8')).version}`
})

const access = { header: (req, name) => req.headers[name], address: () => '127.0.0.1' }
const request = { headers: {} }

/** A guard whose limiter sheds every request (3 held in flight over a limit of 1, load at 1000). */
function shedding() {
  const load = { value: 0 }
  const limiter = new BbrLimiter({ minInFlight: 1, signal: () => load.value, queueDelay: false, latency: false })
  for (let i = 0; i < 3; i++) limiter.tryAcquire('critical')
  load.value = 1000
  return new InboundGuard({ limiter }, access)
}
const admitting = () => new InboundGuard({ limiter: { minInFlight: 1_000_000, queueDelay: false } }, access)

const plainShed = shedding()
const tracedShed = shedding()
const plainAdmit = admitting()
const tracedAdmit = admitting()
const traces = new OpenTelemetryTraces({ api })
traces.add('shed', tracedShed)
traces.add('admit', tracedAdmit)
if (plainShed.tryAcquire(request) >= 0 || tracedShed.tryAcquire(request) >= 0) throw new Error('the guards must shed')

const pair = (guard) => () => guard.release(guard.tryAcquire(request))
const rows = [
  { name: 'guard shed decision', fn: () => plainShed.tryAcquire(request), baseline: true },
  { name: 'guard shed decision, traced, no SDK started', fn: () => tracedShed.tryAcquire(request) },
  { name: 'guard admit + release', fn: pair(plainAdmit) },
  { name: 'guard admit + release, traced, no SDK started', fn: pair(tracedAdmit) },
]
await measure('Traces: the inbound guard traced, without an SDK started', rows, { peers: peers.slice(0, 1) })

// With an SDK and a sampled span active: each shed adds an event (the span is ended every 1000 calls, so that its
// event list stays short; the SDK keeps at most 128 events a span).
const provider = new sdk.BasicTracerProvider({
  spanProcessors: [new sdk.SimpleSpanProcessor(new sdk.InMemorySpanExporter())],
})
api.context.setGlobalContextManager(new contextManager.AsyncLocalStorageContextManager().enable())
api.trace.setGlobalTracerProvider(provider)
const tracer = api.trace.getTracer('bench')
const eventful = new OpenTelemetryTraces({ api })
const recorded = shedding()
eventful.add('recorded', recorded)
let calls = 0
let span = tracer.startSpan('request')
let active = api.trace.setSpan(api.context.active(), span)
const inSpan = (fn) => () => {
  if (++calls % 1000 === 0) {
    span.end()
    span = tracer.startSpan('request')
    active = api.trace.setSpan(api.ROOT_CONTEXT, span)
  }
  return api.context.with(active, fn)
}
await measure(
  'Traces: the inbound guard traced, inside a recording span',
  [
    {
      name: 'guard shed decision, in a recording span, untraced',
      fn: inSpan(() => plainShed.tryAcquire(request)),
      baseline: true,
    },
    {
      name: 'guard shed decision, in a recording span, traced (one event)',
      fn: inSpan(() => recorded.tryAcquire(request)),
    },
  ],
  { peers },
)
