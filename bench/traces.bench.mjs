// What tracing the inbound guard's decisions costs (docs/guide/observability.md, "Traces"): the guard's decision
// alone, beside the same guard added to OpenTelemetryTraces while no OpenTelemetry SDK is started (no context
// manager: the traces ask the API nothing per decision), and with an SDK started and a recording span active (each
// shed then adds a span event). The admit path has no trace call; its rows show that.
// With BULWARK_UNTRACED_ROOT=<a built checkout without the tracing code> (main before the traces were merged), the
// same decisions of that build's guard are measured in the same run: the cost of the code itself, no tracer added.
//   BULWARK_UNTRACED_ROOT=/work/main node bench/traces.bench.mjs
import * as fs from 'fs'
import { createRequire } from 'module'
import * as path from 'path'
import { measure, writeTable } from './harness.mjs'
import { interleaved } from './lib/interleaved.mjs'

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
function shedding(build = { BbrLimiter, InboundGuard }) {
  const load = { value: 0 }
  const limiter = new build.BbrLimiter({ minInFlight: 1, signal: () => load.value, queueDelay: false, latency: false })
  for (let i = 0; i < 3; i++) limiter.tryAcquire('critical')
  load.value = 1000
  return new build.InboundGuard({ limiter }, access)
}
const admitting = (build = { BbrLimiter, InboundGuard }) =>
  new build.InboundGuard({ limiter: { minInFlight: 1_000_000, queueDelay: false } }, access)

const untracedRoot = process.env.BULWARK_UNTRACED_ROOT
const untraced = untracedRoot && {
  BbrLimiter: require(path.resolve(untracedRoot, 'dist/cjs')).BbrLimiter,
  InboundGuard: require(path.resolve(untracedRoot, 'dist/cjs/entries/http')).InboundGuard,
}

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
if (untraced) {
  const shedWithout = shedding(untraced)
  if (shedWithout.tryAcquire(request) >= 0) throw new Error('the untraced guard must shed')
  rows.push(
    { name: 'guard shed decision, without the tracing code', fn: () => shedWithout.tryAcquire(request) },
    { name: 'guard admit + release, without the tracing code', fn: pair(admitting(untraced)) },
  )
}
await measure('Traces: the inbound guard traced, without an SDK started', rows, { peers: peers.slice(0, 1) })

if (untraced) {
  // The same decisions again in interleaved rounds (CPU time, a rotating order: a busy machine skews every case of a
  // round alike), each judged by its median ratio per round to the build without the tracing code.
  const pairs = [
    ['shed decision', () => shedding(untraced), plainShed, tracedShed, (g) => () => g.tryAcquire(request)],
    ['admit + release', () => admitting(untraced), plainAdmit, tracedAdmit, pair],
  ]
  const cases = pairs.flatMap(([what, without, plain, traced, call]) => [
    { name: `${what}, without the tracing code`, fn: call(without()) },
    { name: `${what}, no tracer added`, fn: call(plain) },
    { name: `${what}, traced, no SDK started`, fn: call(traced) },
  ])
  const results = await interleaved(cases, { rounds: 21, roundMs: 30 })
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const lines = pairs.flatMap(([what]) => {
    const base = results.get(`${what}, without the tracing code`)
    return ['without the tracing code', 'no tracer added', 'traced, no SDK started'].map((variant) => {
      const r = results.get(`${what}, ${variant}`)
      const ratios = r.rounds.map((ns, i) => ns / base.rounds[i])
      const sorted = [...ratios].sort((a, b) => a - b)
      const spread = `${sorted[Math.floor(sorted.length / 4)].toFixed(2)}-${sorted[Math.floor((3 * sorted.length) / 4)].toFixed(2)}`
      return [`guard ${what}, ${variant}`, `${r.ns.toFixed(1)} ns`, `${median(ratios).toFixed(2)}x`, spread]
    })
  })
  writeTable(
    'Traces: the guard decision beside a build without the tracing code',
    ['case', 'median ns (CPU time)', 'x without the tracing code (median of rounds)', 'ratio, middle half of rounds'],
    lines,
    { note: `Without the tracing code: ${untracedRoot}, built. 21 interleaved rounds of about 30 ms per case.` },
  )
}

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
