// Shadow mode beside enforcing (docs/rules/shadow.md): per component, ns per decision of a request it admits, of one
// it refuses, and of one it would refuse in shadow mode (counted, then admitted). The goal: shadow mode costs
// at most the component's own decision, so a shadowed refusal should cost about what a refusal does (plus, for the
// components that hold a slot, what admitting costs). Shared regions, as a fleet's components are.
import { createRequire } from 'module'
import { do_not_optimize, measure, writeTable } from './harness.mjs'
import { saturatedBulkhead } from './lib/saturated-bulkhead.mjs'

const require = createRequire(import.meta.url)
const bulwark = require('../dist/cjs')
const {
  AdaptiveBulkhead,
  BbrLimiter,
  CircuitBreaker,
  KeyConcurrencyLimiter,
  KeyedLimiter,
  RetryBudget,
  SlidingWindowLimiter,
  SreBreaker,
  TokenBucket,
} = bulwark

const name = (what) => `bench-shadow-${what}-${process.pid}`
const closing = []
const made = (component) => (closing.push(component), component)
/** Three of one component: admitting, refusing, and refusing in shadow mode. */
function three(make, refuse) {
  const [admit, refused, shadow] = ['admit', 'refuse', 'shadow'].map((role) => made(make(role)))
  refuse(refused)
  refuse(shadow)
  shadow.configure({ shadow: true })
  return { admit, refused, shadow }
}

const OPEN = { rate: 1e12, burst: 1e12 }
const SHUT = { rate: 1e-9, burst: 1 }
const bucket = three(
  (role) => new TokenBucket({ ...(role === 'admit' ? OPEN : SHUT), shared: name(`tb-${role}`) }),
  (b) => b.tryAcquire(),
)
const window = three(
  (role) => new SlidingWindowLimiter({ limit: role === 'admit' ? 1e15 : 1, window: 1e9, shared: name(`sw-${role}`) }),
  (w) => w.tryAcquire(),
)
const keyed = three(
  (role) => new KeyedLimiter({ ...(role === 'admit' ? { rate: 1e8, burst: 1e8 } : SHUT), shared: name(`kl-${role}`) }),
  (k) => k.tryAcquire('tenant'),
)
const perKey = three(
  (role) => new KeyConcurrencyLimiter({ max: role === 'admit' ? 1e6 : 1, shared: name(`kc-${role}`) }),
  (k) => k.tryAcquire('tenant'), // holds the key's one slot
)
const bbr = three(
  (role) =>
    new BbrLimiter(
      role === 'admit'
        ? { shared: name('bbr-admit') }
        : { cpuThreshold: 1, minInFlight: 10, queueDelay: false, shared: name(`bbr-${role}`) },
    ),
  (l) => {
    for (let i = 0; i < 20; i++) l.tryAcquire()
  },
)
const sre = three(
  (role) => new SreBreaker({ minimumCalls: 10, random: () => 0, shared: name(`sre-${role}`) }),
  (b) => {
    for (let i = 0; i < 20; i++) b.recordFailure()
  },
)
const circuit = three(
  (role) =>
    new CircuitBreaker({ minimumCalls: 1, failureRatio: 0.5, openDuration: 86_400_000, shared: name(`cb-${role}`) }),
  (b) => b.recordFailure(),
)
// On a clock that stands still (the saturated one's must): the admitting one too, so that the three time the same.
const bulkhead = three(
  (role) =>
    role === 'admit'
      ? new AdaptiveBulkhead({ shared: name('bh-admit'), now: () => 1000 })
      : saturatedBulkhead(bulwark, name(`bh-${role}`)),
  () => undefined,
)
const budget = three(
  (role) =>
    new RetryBudget({
      ...(role === 'admit' ? { ratio: 1000, minPerSecond: 1e9 } : { ratio: 0, minPerSecond: 0 }),
      shared: name(`rb-${role}`),
    }),
  () => undefined,
)

const pair = (l, key) => () => l.release(l.tryAcquire(key))
const components = [
  ['TokenBucket.tryAcquire', bucket, (b) => () => do_not_optimize(b.tryAcquire())],
  ['SlidingWindowLimiter.tryAcquire', window, (w) => () => do_not_optimize(w.tryAcquire())],
  ['KeyedLimiter.tryAcquire (table)', keyed, (k) => () => do_not_optimize(k.tryAcquire('tenant'))],
  ['KeyConcurrencyLimiter pair', perKey, (k) => pair(k, 'tenant')],
  ['BbrLimiter pair', bbr, (l) => pair(l)],
  ['AdaptiveBulkhead pair', bulkhead, (b) => pair(b)],
  ['SreBreaker.tryAcquire', sre, (b) => () => do_not_optimize(b.tryAcquire())],
  ['CircuitBreaker.tryAcquire', circuit, (b) => () => do_not_optimize(b.tryAcquire())],
  ['RetryBudget.tryAcquire', budget, (b) => () => do_not_optimize(b.tryAcquire())],
]
const cases = components.flatMap(([label, c, call]) => [
  { name: `${label}: admitted`, fn: call(c.admit) },
  // A refused request holds nothing: its pair is the decision alone (a shed token's release would be counted).
  {
    name: `${label}: refused`,
    fn: label.endsWith('pair') ? () => do_not_optimize(c.refused.tryAcquire('tenant')) : call(c.refused),
  },
  { name: `${label}: shadow, would refuse`, fn: call(c.shadow) },
])
const rows = await measure('Shadow mode: each case', cases)
const ns = (value) => `${value.toFixed(1)} ns`
const lines = components.map(([label], i) => {
  const [admitted, refused, shadow] = rows.slice(i * 3, i * 3 + 3)
  // What shadow mode adds: over the refusal it stands for, or, for a pair that holds a slot, over the admitted pair.
  const enforcing = label.endsWith('pair') ? admitted : refused
  const adds = shadow.ns - enforcing.ns
  return [label, ns(admitted.ns), ns(refused.ns), ns(shadow.ns), ns(adds), adds <= refused.ns ? 'met' : 'MISSED']
})
writeTable(
  'Shadow mode beside enforcing',
  [
    'component (shared)',
    'admitted',
    'refused',
    'shadow: would refuse, admitted',
    'shadow mode adds',
    'adds <= refused',
  ],
  lines,
  {
    note: 'Shadow mode adds: over the refusal; for a pair that holds a slot (KeyConcurrencyLimiter, BbrLimiter, AdaptiveBulkhead), over the admitted pair, since shadow mode admits it. Goal: no more than the refusal itself costs.',
  },
)
for (const component of closing) component.close()
