// Breakers: the cost of guarding one call, against opossum and cockatiel, in one run.
import { createRequire } from 'module'
import { do_not_optimize, measure, peer } from './harness.mjs'

const require = createRequire(import.meta.url)
const b = require('../dist/cjs')
const { SreBreaker, CircuitBreaker, BreakerGroup, BreakerOpenError } = b
const Opossum = require('opossum')
const { circuitBreaker, handleAll, ConsecutiveBreaker, SamplingBreaker, BrokenCircuitError } = require('cockatiel')
const opossumPeer = peer('opossum')
const cockatielPeer = peer('cockatiel')

const work = () => 1
const pid = process.pid

// Closed breakers, as on a healthy path.
const sreLocal = new SreBreaker()
const cbLocal = new CircuitBreaker()
// Shared ones with a second member attached, so the periodic refresh really merges two lanes.
const sreShared = new SreBreaker({ shared: `bench-sre-${pid}` })
const sreSharedPeer = new SreBreaker({ shared: `bench-sre-${pid}` })
const cbShared = new CircuitBreaker({ shared: `bench-cb-${pid}` })
const cbSharedPeer = new CircuitBreaker({ shared: `bench-cb-${pid}` })
sreSharedPeer.recordSuccess()
cbSharedPeer.recordSuccess(1)
const group = new BreakerGroup(() => new SreBreaker())
const keys = Array.from({ length: 100 }, (_, i) => `/api/service-${i}`)
let keyIndex = 0

// Open breakers: the reject path.
const cbOpen = new CircuitBreaker({ minimumCalls: 1, openDuration: 86_400_000 })
cbOpen.recordFailure(1)
const sreOpen = new SreBreaker({ window: 3_600_000 })
for (let i = 0; i < 100_000; i++) sreOpen.recordFailure()

// Peers, closed. opossum without its per-call timeout timer (its cheapest setting; we set no timer either).
const opossum = new Opossum(work, { timeout: false })
const cockatielConsecutive = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) })
const cockatielSampling = circuitBreaker(handleAll, {
  halfOpenAfter: 10_000,
  breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
})
// Peers, open.
const opossumOpen = new Opossum(work, { timeout: false })
opossumOpen.open()
const cockatielOpen = circuitBreaker(handleAll, { halfOpenAfter: 1e9, breaker: new ConsecutiveBreaker(1) })
await cockatielOpen.execute(() => Promise.reject(new Error('x'))).catch(() => 0)

// The floor: the try/catch any guard wraps a call in.
const floor = () => {
  try {
    do_not_optimize(work())
  } catch (error) {
    do_not_optimize(error)
  }
}

const guard = (breaker) => () => {
  if (breaker.tryAcquire()) {
    do_not_optimize(work())
    breaker.recordSuccess()
  }
}
const permit = (breaker) => () => {
  if (breaker.tryAcquire()) {
    do_not_optimize(work())
    breaker.recordSuccess(0.1)
  }
}
const swallow = (expected) => (error) => {
  if (!(error instanceof expected)) throw error
}

const cases = [
  { name: 'plain try/catch around the call (floor)', fn: floor },
  { name: 'SreBreaker tryAcquire+recordSuccess', fn: guard(sreLocal), target: 40 },
  { name: 'SreBreaker tryAcquire+recordSuccess, shared', fn: guard(sreShared), target: 40 },
  { name: 'CircuitBreaker tryAcquire+recordSuccess', fn: permit(cbLocal), target: 40, baseline: true },
  { name: 'CircuitBreaker tryAcquire+recordSuccess, shared', fn: permit(cbShared), target: 40 },
  {
    name: 'BreakerGroup.get (100 keys) + tryAcquire+recordSuccess',
    fn: () => {
      const breaker = group.get(keys[keyIndex++ % 100])
      if (breaker.tryAcquire()) {
        do_not_optimize(work())
        breaker.recordSuccess()
      }
    },
  },
  { name: 'CircuitBreaker open: tryAcquire (reject)', fn: () => do_not_optimize(cbOpen.tryAcquire()), target: 40 },
  { name: 'SreBreaker open: tryAcquire (reject, p ~ 1)', fn: () => do_not_optimize(sreOpen.tryAcquire()), target: 40 },
  { name: 'CircuitBreaker execute (async)', fn: async () => cbLocal.execute(work) },
  {
    name: 'CircuitBreaker execute, open (rejects)',
    fn: async () => cbOpen.execute(work).catch(swallow(BreakerOpenError)),
  },
  { name: `${opossumPeer} fire`, fn: async () => opossum.fire() },
  { name: `${opossumPeer} fire, open (rejects)`, fn: async () => opossumOpen.fire().catch(() => 0) },
  {
    name: `${cockatielPeer} ConsecutiveBreaker execute`,
    fn: async () => cockatielConsecutive.execute(work),
  },
  { name: `${cockatielPeer} SamplingBreaker execute`, fn: async () => cockatielSampling.execute(work) },
  {
    name: `${cockatielPeer} execute, open (rejects)`,
    fn: async () => cockatielOpen.execute(work).catch(swallow(BrokenCircuitError)),
  },
]
const rows = await measure('Breakers: cost of one guarded call', cases, { peers: [opossumPeer, cockatielPeer] })

// How far below each peer the guarded call is (the issue asks for 5x below cockatiel and 20x below opossum).
const ns = (prefix) => rows.find((r) => r.name.startsWith(prefix)).ns
const ours = ns('CircuitBreaker tryAcquire+recordSuccess')
const oursSre = ns('SreBreaker tryAcquire+recordSuccess')
const oursAsync = ns('CircuitBreaker execute (async)')
for (const peer of [`${opossumPeer} fire`, `${cockatielPeer} ConsecutiveBreaker`, `${cockatielPeer} SamplingBreaker`]) {
  const p = ns(peer)
  console.log(
    `${peer}: ${(p / ours).toFixed(1)}x CircuitBreaker tryAcquire+recordSuccess, ${(p / oursSre).toFixed(1)}x SreBreaker tryAcquire+recordSuccess, ${(p / oursAsync).toFixed(1)}x CircuitBreaker execute`,
  )
}

for (const breaker of [sreLocal, cbLocal, sreShared, sreSharedPeer, cbShared, cbSharedPeer, cbOpen, sreOpen])
  breaker.close()
group.close()
opossum.shutdown()
opossumOpen.shutdown()
