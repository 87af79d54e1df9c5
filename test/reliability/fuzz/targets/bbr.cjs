// BbrLimiter: options, the never-throwing hot path (tryAcquire / release with any argument), execute, stats.
'use strict'
const {
  b,
  fc,
  assert,
  anyValue,
  weirdNumber,
  options,
  typedOrValue,
  typedOrResolved,
  isCount,
  neverThrows,
  uniqueName,
} = require('../kit.cjs')

const FIELDS = [
  'window',
  'buckets',
  'cpuThreshold',
  'cooldown',
  'minInFlight',
  'signal',
  'queueDelay',
  'priorities',
  'shared',
  'maxMembers',
  'rtSampling',
  'now',
]
const clock = fc.func(weirdNumber).map((f) => () => f())
const good = {
  window: fc.constantFrom(1000, 10_000, 200),
  buckets: fc.constantFrom(10, 100, 2),
  cpuThreshold: fc.integer({ min: 1, max: 1000 }),
  cooldown: fc.integer({ min: 0, max: 5000 }),
  minInFlight: fc.integer({ min: 0, max: 100 }),
  signal: fc.oneof(
    fc.constantFrom('max', 'cpu', 'elu'),
    fc.func(weirdNumber).map((f) => () => f()),
    fc.record({ load: fc.func(weirdNumber), delay: fc.func(weirdNumber) }),
  ),
  queueDelay: fc.oneof(
    fc.constant(false),
    fc.record(
      { target: fc.integer({ min: 1, max: 100 }), interval: fc.integer({ min: 0, max: 500 }) },
      { requiredKeys: [] },
    ),
  ),
  priorities: fc.record(
    { critical: fc.double({ min: 0.1, max: 2, noNaN: true }), low: anyValue },
    { requiredKeys: [] },
  ),
  maxMembers: fc.integer({ min: 1, max: 8 }),
  rtSampling: fc.constantFrom(1, 2, 8, 3),
  now: clock,
}

function checkStats(s) {
  for (const k of [
    'inFlight',
    'maxInFlight',
    'admitted',
    'shed',
    'shedInFlight',
    'shedQueueDelay',
    'invalidReleases',
  ]) {
    assert.ok(isCount(s[k]), `${k} = ${s[k]}`)
  }
  assert.equal(s.shed, s.shedInFlight + s.shedQueueDelay)
  let admitted = 0
  for (const c of Object.values(s.byPriority)) admitted += c.admitted
  assert.equal(admitted, s.admitted)
}

module.exports = [
  {
    name: 'constructor: any options give a limiter or a typed error naming the option',
    runs: 2000,
    property: fc.property(options(good, { shared: fc.constantFrom('bbr-fuzz', 'a/b', '') }), (o) => {
      // A shared name is given a unique suffix so that runs never meet (their options differ).
      if (o && typeof o === 'object' && o.shared === 'bbr-fuzz') o.shared = uniqueName('bbr-fuzz')
      const r = typedOrValue(() => new b.BbrLimiter(o), { fields: FIELDS, given: o })
      if (r.value) {
        checkStats(r.value.stats())
        r.value.close()
      }
    }),
  },
  {
    name: 'tryAcquire / release never throw, for any argument, and keep the counts consistent',
    runs: 3000,
    property: fc.property(
      fc.array(fc.tuple(fc.boolean(), anyValue), { maxLength: 40 }),
      fc.integer({ min: 0, max: 1000 }),
      (ops, load) => {
        const limiter = new b.BbrLimiter({
          signal: () => load,
          minInFlight: 4,
          window: 1000,
          buckets: 10,
          now: () => 0,
        })
        const held = []
        for (const [acquire, arg] of ops) {
          if (acquire) {
            const token = neverThrows('tryAcquire', () => limiter.tryAcquire(arg))
            assert.ok(
              typeof token === 'number' && (token >= 0 || token === b.Shed.inFlight || token === b.Shed.queueDelay),
              `token ${token}`,
            )
            if (token >= 0) held.push(token)
          } else {
            neverThrows('release', () => limiter.release(arg))
          }
        }
        const s = limiter.stats()
        checkStats(s)
        assert.ok(s.inFlight <= held.length, 'made-up tokens never lower the count below what is held')
        for (const t of held) neverThrows('release', () => limiter.release(t))
        assert.equal(limiter.stats().inFlight, 0)
        limiter.close()
      },
    ),
  },
  {
    name: "execute: any fn and priority settle with fn's outcome or OverloadError",
    runs: 1000,
    property: fc.asyncProperty(anyValue, anyValue, async (result, priority) => {
      const limiter = new b.BbrLimiter({ signal: () => 0, now: () => 0 })
      const fn = typeof result === 'function' ? result : () => result
      const r = await typedOrResolved(() => limiter.execute(fn, { priority }), {})
      if (r.error) assert.ok(r.error instanceof b.OverloadError)
      assert.equal(limiter.inFlight, 0)
      limiter.close()
    }),
  },
]
