// TokenBucket, SlidingWindowLimiter, KeyedLimiter and RedisRateLimiter (with fake clients that answer anything).
'use strict'
const {
  b,
  fc,
  assert,
  anyValue,
  weirdNumber,
  key,
  options,
  typedOrValue,
  typedOrResolved,
  neverThrows,
  isCount,
  uniqueName,
} = require('../kit.cjs')

const clock = fc.func(weirdNumber).map((f) => () => f())
const sharing = { maxMembers: fc.integer({ min: 1, max: 8 }), now: clock }
const sharedName = { shared: fc.constantFrom('rl-fuzz', 'no spaces allowed') }
const anyN = fc.oneof(
  fc.integer({ min: 1, max: 10 }),
  fc.double({ min: 0.001, max: 20, noNaN: true }),
  weirdNumber,
  anyValue,
)

function uniqueShared(o) {
  if (o && typeof o === 'object' && o.shared === 'rl-fuzz') o.shared = uniqueName('rl-fuzz')
  return o
}

/** Drives a limiter with any permit counts: booleans (never a throw), and never more than its capacity at once. */
function drive(limiter, capacity, ns) {
  let taken = 0
  for (const n of ns) {
    const ok = neverThrows('tryAcquire', () => limiter.tryAcquire(n))
    assert.equal(typeof ok, 'boolean')
    if (ok) taken += n === undefined ? 1 : n
    const after = typedOrValue(() => limiter.retryAfterMs(n), { argumentsNamed: ['n'] })
    if (!after.error) assert.ok(after.value >= 0, `retryAfterMs ${after.value}`)
  }
  const available = limiter.available()
  assert.ok(available >= 0 && available <= capacity, `available ${available} of ${capacity}`)
  return taken
}

/** A client that answers evalsha / eval with whatever the fuzzer chose: a value, a rejection, a throw, never. */
function fakeRedis(replies, status) {
  let i = 0
  const answer = () => {
    const [how, value] = replies[i++ % replies.length] || ['resolve', [1, 0, 0]]
    if (how === 'throw') throw value
    if (how === 'reject') return Promise.reject(value)
    if (how === 'never') return new Promise(() => undefined)
    return Promise.resolve(value)
  }
  return { evalsha: answer, eval: answer, status }
}
const reply = fc.oneof(
  fc.tuple(fc.constant('resolve'), fc.oneof(fc.tuple(fc.constantFrom(0, 1), fc.nat(100), fc.nat(1e6)), anyValue)),
  fc.tuple(
    fc.constantFrom('reject', 'throw'),
    fc.oneof(fc.constant(new Error('NOSCRIPT No matching script')), anyValue),
  ),
  fc.constant(['never', undefined]),
)

module.exports = [
  {
    name: 'TokenBucket: any options and permit counts give booleans or typed errors, never more than burst at once',
    runs: 2000,
    property: fc.property(
      options(
        {
          rate: fc.double({ min: 0.01, max: 1e6, noNaN: true }),
          burst: fc.double({ min: 0.5, max: 100, noNaN: true }),
          ...sharing,
        },
        sharedName,
      ),
      fc.array(anyN, { maxLength: 20 }),
      (o, ns) => {
        const tb = typedOrValue(() => new b.TokenBucket(uniqueShared(o)), {
          fields: ['rate', 'burst', 'shared', 'maxMembers', 'now'],
          given: o,
        }).value
        if (!tb) return
        drive(tb, tb.burst, ns)
        for (const n of ns) assert.equal(typeof neverThrows('tryAcquire', () => tb.tryAcquire(n)), 'boolean')
        tb.close()
      },
    ),
  },
  {
    name: 'SlidingWindowLimiter: any options and permit counts give booleans or typed errors, never more than limit in a window',
    runs: 2000,
    property: fc.property(
      options(
        {
          limit: fc.integer({ min: 1, max: 50 }),
          window: fc.integer({ min: 1, max: 5000 }),
          buckets: fc.integer({ min: 1, max: 20 }),
          ...sharing,
        },
        sharedName,
      ),
      fc.array(anyN, { maxLength: 20 }),
      (o, ns) => {
        // Without a clock of its own, a clock that stands still (the coarse clock may tick during the run).
        const fixed = o !== null && typeof o === 'object' && o.now === undefined
        if (fixed) o.now = () => 5
        const sw = typedOrValue(() => new b.SlidingWindowLimiter(uniqueShared(o)), {
          fields: ['limit', 'window', 'buckets', 'shared', 'maxMembers', 'now'],
          given: o,
        }).value
        if (!sw) return
        const taken = drive(sw, sw.limit, ns)
        // With the real clock frozen inside this synchronous run, the window cannot slide: taken <= limit.
        if (fixed) assert.ok(taken <= sw.limit + 1e-9, `took ${taken} of ${sw.limit}`)
        sw.close()
      },
    ),
  },
  {
    name: 'KeyedLimiter: any keys give a boolean, never a throw; the pool stays within maxKeys',
    runs: 1500,
    property: fc.property(
      options({ maxKeys: fc.integer({ min: 1, max: 5 }), idleTimeout: fc.integer({ min: 1, max: 100 }), now: clock }),
      fc.array(fc.tuple(fc.oneof(key, anyValue), anyN), { maxLength: 25 }),
      (o, calls) => {
        const keyed = typedOrValue(() => new b.KeyedLimiter(() => new b.TokenBucket({ rate: 10, burst: 3 }), o), {
          fields: ['maxKeys', 'idleTimeout', 'shared', 'now', 'factory'],
          given: o,
        }).value
        if (!keyed) return
        for (const [k, n] of calls) {
          assert.equal(typeof neverThrows('tryAcquire', () => keyed.tryAcquire(k, n)), 'boolean')
          typedOrValue(() => keyed.has(k), {})
        }
        const s = keyed.stats()
        assert.ok(s.size <= keyed.maxKeys && isCount(s.created) && isCount(s.evicted) && isCount(s.expired))
        assert.ok(isCount(s.refused) && s.created - s.evicted - s.expired >= s.size)
        keyed.prune()
        keyed.close()
        assert.equal(keyed.size, 0)
      },
    ),
  },
  {
    name: 'RedisRateLimiter constructor: a limiter or a typed error naming the option',
    runs: 1500,
    property: fc.property(
      options({
        redis: fc.constant(fakeRedis([], 'ready')),
        limit: fc.integer({ min: 1, max: 100 }),
        window: fc.integer({ min: 1, max: 60_000 }),
        keyPrefix: fc.constantFrom('p:', '{x}', ''),
        algorithm: fc.constantFrom('sliding-window', 'gcra'),
        burst: fc.integer({ min: 1, max: 100 }),
        timeout: fc.integer({ min: 1, max: 100 }),
        hosts: fc.integer({ min: 1, max: 4 }),
        openAfter: fc.integer({ min: 1, max: 5 }),
        probeInterval: fc.nat(1000),
        now: clock,
      }),
      (o) => {
        const r = typedOrValue(() => new b.RedisRateLimiter(o), {
          fields: [
            'redis',
            'limit',
            'window',
            'keyPrefix',
            'algorithm',
            'burst',
            'timeout',
            'hosts',
            'insurance',
            'openAfter',
            'probeInterval',
            'now',
          ],
          given: o,
        })
        if (r.value) r.value.close()
      },
    ),
  },
  {
    name: 'RedisRateLimiter.consume: whatever the client answers (or never), a decision within the timeout or a typed error',
    runs: 600,
    property: fc.asyncProperty(
      fc.array(reply, { minLength: 1, maxLength: 6 }),
      fc.constantFrom('ready', 'wait', 'end', undefined),
      fc.array(fc.tuple(fc.oneof(key, anyValue), anyN), { minLength: 1, maxLength: 6 }),
      fc.constantFrom('sliding-window', 'gcra'),
      async (replies, status, calls, algorithm) => {
        const limiter = new b.RedisRateLimiter({
          redis: fakeRedis(replies, status),
          limit: 10,
          window: 1000,
          timeout: 5,
          openAfter: 2,
          probeInterval: 0,
          algorithm,
        })
        limiter.onError(() => undefined)
        const started = performance.now()
        const settleOrHang = (p) =>
          Promise.race([p, new Promise((resolve) => setTimeout(() => resolve({ hung: true }), 1000))])
        const results = await Promise.all(
          calls.map(([k, n]) =>
            settleOrHang(typedOrResolved(() => limiter.consume(k, n), { argumentsNamed: ['key', 'n'] })),
          ),
        )
        for (const r of results) assert.ok(!r.hung, 'a decision never settled')
        const elapsed = performance.now() - started
        for (const r of results) {
          if (r.error) continue
          const d = r.value
          assert.equal(typeof d.allowed, 'boolean')
          assert.ok(d.source === 'redis' || d.source === 'insurance')
          if (d.source === 'redis')
            assert.ok(isCount(d.remaining) && isCount(d.retryAfterMs), `redis decision ${JSON.stringify(d)}`)
        }
        assert.ok(elapsed < 5 + 200, `took ${elapsed} ms with a 5 ms timeout`)
        limiter.close()
      },
    ),
  },
]
