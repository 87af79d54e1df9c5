// Errors, signals and the sampler, subsetting (subset, ConsistentHash, fnv1a32) and resilience helpers (retry,
// withFallbacks, RetryBudget, fullJitterDelay).
'use strict'
const {
  b,
  fc,
  assert,
  anyValue,
  anySmall,
  weirdNumber,
  key,
  options,
  checkTypedError,
  typedOrValue,
  typedOrResolved,
  isCount,
} = require('../kit.cjs')

// Small values: a ring costs `replicas` hashes per member, so a 4 MiB iterable of members would only be slow.
const member = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), anySmall)

module.exports = [
  {
    name: 'error classes: any constructor arguments give an error whose message renders',
    runs: 2000,
    property: fc.property(anyValue, anyValue, anyValue, (x, y, z) => {
      const errors = [
        new b.InvalidOptionError(String(typeof x), y, 'a thing'),
        new b.InvalidArgumentError('arg', y, 'a thing'),
        new b.BreakerOpenError(typeof x === 'string' ? x : undefined, typeof z === 'number' ? z : 0),
        new b.OverloadError(x === 1 ? 'queue-delay' : 'in-flight'),
        new b.FallbackChainError(Array.isArray(x) ? x : [x, y]),
        new b.RegionCorruptError('r', 'm'),
        new b.RegionMismatchError('r', 'm'),
        new b.SharedMemoryError('ERR_BULWARK_SYSTEM', 'r', 'm'),
        new b.MissingPeerDependencyError('prom-client', 'the exporter', y),
      ]
      for (const e of errors) {
        assert.ok(e instanceof b.BulwarkError && e instanceof Error)
        // A breaker's name is shown whole (shared names are at most 200 characters); everything else is bounded.
        assert.ok(typeof e.message === 'string' && e.message.length < 2000 + (typeof x === 'string' ? x.length : 0))
        assert.equal(typeof String(e), 'string')
        assert.equal(e.name, e.constructor.name)
      }
      assert.ok(errors[2].retryAfter >= 0)
    }),
  },
  {
    name: 'signals: every reading is a finite number in range, whatever configureSampler was given',
    runs: 1000,
    property: fc.property(
      options({
        cpuInterval: fc.integer({ min: 10, max: 1000 }),
        loopInterval: fc.integer({ min: 5, max: 500 }),
        cpuDecay: fc.double({ min: 0, max: 0.99, noNaN: true }),
        loopDecay: fc.double({ min: 0, max: 0.99, noNaN: true }),
        cgroupRoot: fc.oneof(
          fc.constantFrom('/', '/nonexistent', '/proc', '\u0000', 'relative/dir', '/'.repeat(5000)),
          key,
        ),
      }),
      (o) => {
        typedOrValue(() => b.configureSampler(o), {
          fields: ['cpuInterval', 'loopInterval', 'cpuDecay', 'loopDecay', 'cgroupRoot'],
          given: o,
        })
        for (const read of [b.cpuUsage, b.eventLoopUtilization]) {
          const v = read()
          assert.ok(v >= 0 && v <= 1000, `${read.name} ${v}`)
        }
        for (const read of [b.eventLoopDelay, b.eventLoopDelayRaw, b.eventLoopDelayMin, b.coarseNow, b.preciseNow])
          assert.ok(isCount(read()), read.name)
        const info = b.loadInfo()
        assert.ok(info.cores > 0 && ['host', 'cgroup-v1', 'cgroup-v2'].includes(info.source))
      },
    ),
    // Put the sampler back as it was, for the properties that follow.
    after: () =>
      b.configureSampler({ cpuInterval: 500, loopInterval: 50, cpuDecay: 0.95, loopDecay: 0.75, cgroupRoot: '/' }),
  },
  {
    name: 'subset / ConsistentHash / fnv1a32: any keys, members and counts give members or typed errors',
    runs: 2000,
    property: fc.property(
      fc.oneof(key, anyValue),
      fc.oneof(fc.array(member, { maxLength: 12 }), anySmall),
      fc.oneof(fc.nat(12), weirdNumber, anyValue),
      options({ replicas: fc.integer({ min: 1, max: 200 }) }),
      member,
      (k, members, n, o, extra) => {
        const names = ['selectKey', 'members', 'member', 'n', 'key', 'text']
        const picked = typedOrValue(() => b.subset(k, members, n), { argumentsNamed: names })
        if (!picked.error) {
          assert.ok(Array.isArray(picked.value) && picked.value.length <= n)
          for (const m of picked.value) assert.ok(members.includes(m))
        }
        const ring = typedOrValue(() => new b.ConsistentHash(members, o), {
          fields: ['replicas'],
          argumentsNamed: names,
          given: o,
        }).value
        if (ring) {
          const owner = typedOrValue(() => ring.get(k), { argumentsNamed: names })
          if (!owner.error && ring.size > 0) assert.ok(ring.has(owner.value))
          const some = typedOrValue(() => ring.getN(k, n), { argumentsNamed: names })
          if (!some.error) assert.ok(some.value.length <= Math.min(n, ring.size))
          // A small member: each costs `replicas` hashes of its string form (a 4 MiB byte array's is 8 MB long).
          typedOrValue(() => ring.add(extra), { argumentsNamed: names })
          typedOrValue(() => ring.remove(extra), { argumentsNamed: names })
        }
        const hash = typedOrValue(() => b.fnv1a32(k), { argumentsNamed: names })
        if (!hash.error) assert.ok(Number.isInteger(hash.value) && hash.value >= 0 && hash.value <= 0xffffffff)
      },
    ),
  },
  {
    name: 'fullJitterDelay and RetryBudget: any arguments give a delay in range, a budget or typed errors',
    runs: 2000,
    property: fc.property(
      fc.oneof(fc.nat(10), weirdNumber, anyValue),
      fc.oneof(fc.nat(1000), weirdNumber),
      fc.oneof(fc.nat(5000), weirdNumber),
      fc.func(weirdNumber),
      options({
        ratio: fc.double({ min: 0, max: 2, noNaN: true }),
        minPerSecond: fc.nat(20),
        window: fc.integer({ min: 1, max: 10_000 }),
        buckets: fc.integer({ min: 1, max: 20 }),
        now: fc.func(weirdNumber),
      }),
      (retry, base, max, random, o) => {
        const delay = typedOrValue(() => b.fullJitterDelay(retry, base, max, random), {
          argumentsNamed: ['retry', 'baseDelay', 'maxDelay', 'random'],
        })
        if (!delay.error)
          assert.ok(
            delay.value >= 0 && delay.value <= max && !(delay.value > base * 2 ** retry),
            `delay ${delay.value}`,
          )
        const budget = typedOrValue(() => new b.RetryBudget(o), {
          fields: ['ratio', 'minPerSecond', 'window', 'buckets', 'now'],
          given: o,
        }).value
        if (!budget) return
        for (let i = 0; i < 5; i++) {
          budget.recordRequest()
          assert.equal(typeof budget.tryAcquire(), 'boolean')
        }
        const s = budget.stats()
        assert.ok(isCount(s.requests) && isCount(s.retries) && isCount(s.available), JSON.stringify(s))
      },
    ),
  },
  {
    name: "retry and withFallbacks: any options and steps settle with a step's outcome or a typed error",
    runs: 1000,
    property: fc.asyncProperty(
      options({
        attempts: fc.integer({ min: 1, max: 4 }),
        baseDelay: fc.nat(5),
        maxDelay: fc.nat(5),
        retryOn: fc.func(fc.boolean()),
        random: fc.func(weirdNumber),
      }),
      fc.array(fc.tuple(fc.boolean(), anyValue), { minLength: 1, maxLength: 4 }),
      async (o, outcomes) => {
        if (o === undefined) o = {}
        if (o && typeof o === 'object') o.sleep = async () => undefined // no real waits
        let call = 0
        const fn = () => {
          const [ok, v] = outcomes[Math.min(call++, outcomes.length - 1)]
          if (ok) return v
          throw v
        }
        const fields = ['attempts', 'budget', 'baseDelay', 'maxDelay', 'retryOn', 'random', 'sleep']
        try {
          await b.retry(fn, o)
        } catch (thrown) {
          // fn's own failure comes back as it was thrown (retry's contract); anything else must be a typed error.
          if (!outcomes.some(([ok, v]) => !ok && Object.is(v, thrown)))
            checkTypedError(thrown, { fields, argumentsNamed: ['fn'], given: o })
        }
        const steps = outcomes.map(
          ([ok, v]) =>
            () =>
              ok ? v : Promise.reject(v),
        )
        const r = await typedOrResolved(() => b.withFallbacks(...steps), { argumentsNamed: ['primary', 'fallbacks'] })
        if (r.error) assert.ok(r.error instanceof b.FallbackChainError && r.error.errors.length === steps.length)
      },
    ),
  },
]

// Observability: inspectRegions and HostWatcher read every region of the host, garbage files included.
const fs = require('fs')
const { uniqueName } = require('../kit.cjs')
const watched = uniqueName('fz-top')
const owned = [
  new b.BbrLimiter({ shared: watched, queueDelay: false }),
  new b.SreBreaker({ shared: watched }),
  new b.CircuitBreaker({ shared: watched }),
  new b.HeavyKeeper({ shared: watched, k: 5 }),
  new b.TokenBucket({ rate: 10, shared: watched }),
  new b.SlidingWindowLimiter({ limit: 10, window: 1000, shared: watched }),
]
owned[3].add('hot key')
const { regionLocation } = require('../../../../dist-internal/foundation/regions/regions')
const garbage = [regionLocation(`bbr.${watched}-garbage`), regionLocation(`heavykeeper.${watched}-short`)]
fs.writeFileSync(garbage[0], Buffer.alloc(8192, 0x5a), { mode: 0o600 })
fs.writeFileSync(garbage[1], Buffer.alloc(10), { mode: 0o600 })

module.exports.push({
  name: 'inspectRegions / HostWatcher: any options give reports or typed errors, garbage region files included',
  runs: 300, // each call maps every region of the host
  property: fc.property(
    options({
      names: fc.array(fc.oneof(fc.constantFrom(watched, `*${watched}*`, '*', 'bbr.*'), key), { maxLength: 3 }),
      keys: fc.integer({ min: 0, max: 20 }),
    }),
    (o) => {
      const reports = typedOrValue(() => b.inspectRegions(o), { fields: ['names', 'keys'], given: o })
      if (!reports.error) assert.ok(Array.isArray(reports.value))
      const watcher = typedOrValue(() => new b.HostWatcher(o), { fields: ['names', 'keys'], given: o }).value
      if (watcher) {
        watcher.sample()
        watcher.sample()
      }
    },
  ),
  after: () => {
    for (const x of owned) x.close()
    for (const f of garbage) fs.rmSync(f, { force: true })
  },
})
