// Per-key concurrency (docs/rules/key-concurrency.md), ns per admitted pair (tryAcquire + release) and per refusal,
// local and shared across processes, beside the naive counter an application would write (a Map of counts, no
// bound, no sharing, no double-release check): what the bounds, the token check and the host-wide count cost.
import { createRequire } from 'module'
import { do_not_optimize, measure } from './harness.mjs'

const require = createRequire(import.meta.url)
const { KeyConcurrencyLimiter } = require('../dist/cjs')

const keys = Array.from({ length: 1024 }, (_, i) => `tenant-${i}`)
let k = 0
const next = () => keys[(k = (k + 1) & 1023)]

const local = new KeyConcurrencyLimiter({ max: 10, maxKeys: 2048 })
const shared = new KeyConcurrencyLimiter({ max: 10, maxKeys: 2048, shared: `bench-keyconc-${process.pid}` })
const fullLocal = new KeyConcurrencyLimiter({ max: 1 })
const fullShared = new KeyConcurrencyLimiter({ max: 1, shared: `bench-keyconc-full-${process.pid}` })
// Every key's entry (and, shared, its region) made before measuring: the pairs measure keys the pool holds.
for (const key of keys) {
  for (const l of [local, shared]) l.release(l.tryAcquire(key))
}
fullLocal.tryAcquire('busy')
fullShared.tryAcquire('busy')

const counts = new Map()
function naivePair(key) {
  const n = counts.get(key) ?? 0
  if (n >= 10) return false
  counts.set(key, n + 1)
  counts.set(key, counts.get(key) - 1)
  return true
}

const pair = (limiter) => () => {
  const t = limiter.tryAcquire(next())
  limiter.release(t)
  return do_not_optimize(t)
}

await measure('Per-key concurrency', [
  { name: 'naive Map counter, pair', fn: () => do_not_optimize(naivePair(next())), baseline: true },
  { name: 'KeyConcurrencyLimiter pair, 1024 keys', fn: pair(local), target: 150 },
  { name: 'KeyConcurrencyLimiter pair, 1024 keys (shared)', fn: pair(shared), target: 250 },
  { name: 'KeyConcurrencyLimiter refused', fn: () => do_not_optimize(fullLocal.tryAcquire('busy')), target: 100 },
  {
    name: 'KeyConcurrencyLimiter refused (shared)',
    fn: () => do_not_optimize(fullShared.tryAcquire('busy')),
    target: 150,
  },
])
for (const l of [local, shared, fullLocal, fullShared]) l.close()
