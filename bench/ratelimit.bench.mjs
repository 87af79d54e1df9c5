// Local rate limiters, ns per decision, admitted and rejected, private and shared across processes, side by side
// with rate-limiter-flexible's RateLimiterMemory (which rejects by rejecting its promise: awaited here, as a caller
// must).
import { createRequire } from 'module'
import { RateLimiterMemory } from 'rate-limiter-flexible'
import { do_not_optimize, measure, peer } from './harness.mjs'

const require = createRequire(import.meta.url)
const { TokenBucket, SlidingWindowLimiter, KeyedLimiter } = require('../dist/cjs')

const name = (what) => `bench-rl-${what}-${process.pid}`
const OPEN = { rate: 1e12, burst: 1e12 } // never runs dry: every call admits
const SHUT = { rate: 1e-9, burst: 1 } // one token, then nothing for years
const wide = { limit: 1e15, window: 1000, buckets: 10 }
const full = { limit: 1, window: 1e9, buckets: 10 }

const bucketAdmit = new TokenBucket(OPEN)
const bucketReject = new TokenBucket(SHUT)
const sharedBucketAdmit = new TokenBucket({ ...OPEN, shared: name('tb-admit') })
const sharedBucketReject = new TokenBucket({ ...SHUT, shared: name('tb-reject') })
const windowAdmit = new SlidingWindowLimiter(wide)
const windowReject = new SlidingWindowLimiter(full)
const sharedWindowAdmit = new SlidingWindowLimiter({ ...wide, shared: name('sw-admit') })
const sharedWindowReject = new SlidingWindowLimiter({ ...full, shared: name('sw-reject') })
for (const drained of [bucketReject, sharedBucketReject, windowReject, sharedWindowReject]) drained.tryAcquire(1)

const keys = Array.from({ length: 1024 }, (_, i) => `client-${i}`)
const keyed = new KeyedLimiter(() => new TokenBucket(OPEN), { maxKeys: 2048 })
let k = 0

const rlf = peer('rate-limiter-flexible')
const rlfAdmit = new RateLimiterMemory({ points: 1e12, duration: 1 })
const rlfReject = new RateLimiterMemory({ points: 1, duration: 1e6 })
await rlfReject.consume('k').catch(() => undefined)
await rlfReject.consume('k').catch(() => undefined)

const cases = [
  { name: 'TokenBucket.tryAcquire admitted', fn: () => do_not_optimize(bucketAdmit.tryAcquire()), target: 40 },
  { name: 'TokenBucket.tryAcquire rejected', fn: () => do_not_optimize(bucketReject.tryAcquire()), target: 40 },
  {
    name: 'TokenBucket.tryAcquire admitted (shared)',
    fn: () => do_not_optimize(sharedBucketAdmit.tryAcquire()),
    target: 40,
  },
  {
    name: 'TokenBucket.tryAcquire rejected (shared)',
    fn: () => do_not_optimize(sharedBucketReject.tryAcquire()),
    target: 40,
  },
  { name: 'SlidingWindowLimiter.tryAcquire admitted', fn: () => do_not_optimize(windowAdmit.tryAcquire()), target: 40 },
  {
    name: 'SlidingWindowLimiter.tryAcquire rejected',
    fn: () => do_not_optimize(windowReject.tryAcquire()),
    target: 40,
  },
  {
    name: 'SlidingWindowLimiter.tryAcquire admitted (shared)',
    fn: () => do_not_optimize(sharedWindowAdmit.tryAcquire()),
    target: 40,
  },
  {
    name: 'SlidingWindowLimiter.tryAcquire rejected (shared)',
    fn: () => do_not_optimize(sharedWindowReject.tryAcquire()),
    target: 40,
  },
  {
    name: 'KeyedLimiter.tryAcquire (1024 keys, token buckets)',
    fn: () => do_not_optimize(keyed.tryAcquire(keys[k++ & 1023])),
  },
  { name: `${rlf} RateLimiterMemory.consume admitted`, fn: () => rlfAdmit.consume('k'), baseline: true },
  { name: `${rlf} RateLimiterMemory.consume rejected`, fn: () => rlfReject.consume('k').catch(() => undefined) },
]
await measure('Rate limiters: one local decision', cases, { peers: [rlf] })

for (const l of [sharedBucketAdmit, sharedBucketReject, sharedWindowAdmit, sharedWindowReject]) l.close()
