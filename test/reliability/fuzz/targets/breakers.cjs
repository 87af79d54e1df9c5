// SreBreaker, CircuitBreaker, BreakerGroup: options, the never-throwing hot paths, execute, stats, events.
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

const clock = fc.func(weirdNumber).map((f) => () => f())
const windowed = {
  window: fc.constantFrom(1000, 3000, 10),
  buckets: fc.integer({ min: 1, max: 20 }),
  maxMembers: fc.integer({ min: 1, max: 8 }),
  now: fc.oneof(
    clock,
    fc.constant(() => 0),
  ),
}
const shared = { shared: fc.constantFrom('brk-fuzz', 'bad name', '') }
const SRE_FIELDS = [
  'success',
  'minimumCalls',
  'window',
  'buckets',
  'countRejections',
  'shared',
  'maxMembers',
  'now',
  'random',
]
// Anything as execute's options, and objects whose signal is anything (an aborted AbortSignal included).
const executeOptions = fc.oneof(
  anyValue,
  fc.record(
    { signal: fc.oneof(anyValue, fc.constant(AbortSignal.abort()), fc.constant(new AbortController().signal)) },
    { requiredKeys: [] },
  ),
)
const CB_FIELDS = [
  'strategy',
  'failureRatio',
  'slowCallRatio',
  'failureCount',
  'slowCallDuration',
  'minimumCalls',
  'window',
  'buckets',
  'openDuration',
  'halfOpenCalls',
  'probeTimeout',
  'shared',
  'maxMembers',
  'now',
]

function uniqueShared(o) {
  if (o && typeof o === 'object' && o.shared === 'brk-fuzz') o.shared = uniqueName('brk-fuzz')
  return o
}

function checkSreStats(s) {
  assert.ok(isCount(s.accepts) && isCount(s.calls) && s.accepts <= s.calls, JSON.stringify(s))
  assert.ok(s.dropProbability >= 0 && s.dropProbability < 1)
  assert.ok(s.state === 'open' || s.state === 'closed')
}

function checkCircuitStats(s) {
  assert.ok(['closed', 'open', 'half-open'].includes(s.state))
  assert.ok(isCount(s.calls) && isCount(s.badCalls) && s.badCalls <= s.calls, JSON.stringify(s))
  assert.ok(s.badRatio >= 0 && s.badRatio <= 1)
  assert.ok(isCount(s.probesIssued) && isCount(s.probesPassed) && s.probesPassed <= s.probesIssued + 1000)
}

module.exports = [
  {
    name: 'SreBreaker constructor: a breaker or a typed error naming the option',
    runs: 2000,
    property: fc.property(
      options(
        {
          ...windowed,
          success: fc.double({ min: 0.01, max: 1, noNaN: true }),
          minimumCalls: fc.integer({ min: 0, max: 200 }),
          countRejections: fc.boolean(),
          random: fc.func(weirdNumber),
        },
        shared,
      ),
      (o) => {
        const r = typedOrValue(() => new b.SreBreaker(uniqueShared(o)), { fields: SRE_FIELDS, given: o })
        if (r.value) {
          checkSreStats(r.value.stats())
          r.value.close()
        }
      },
    ),
  },
  {
    name: 'SreBreaker tryAcquire / recordSuccess / recordFailure never throw, with any clock and random source',
    runs: 2000,
    property: fc.property(
      clock,
      fc.func(weirdNumber),
      fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 300 }),
      (now, random, ops) => {
        const sre = new b.SreBreaker({ now, random: () => random(), minimumCalls: 5 })
        for (const op of ops) {
          if (op === 0) assert.equal(typeof neverThrows('tryAcquire', () => sre.tryAcquire()), 'boolean')
          else if (op === 1) neverThrows('recordSuccess', () => sre.recordSuccess())
          else neverThrows('recordFailure', () => sre.recordFailure())
        }
        checkSreStats(sre.stats())
        sre.close()
      },
    ),
  },
  {
    name: 'CircuitBreaker constructor: a breaker or a typed error naming the option',
    runs: 2000,
    property: fc.property(
      options(
        {
          ...windowed,
          strategy: fc.constantFrom('errorRatio', 'slowCallRatio', 'errorCount'),
          failureRatio: fc.double({ min: 0.01, max: 1, noNaN: true }),
          slowCallRatio: fc.double({ min: 0.01, max: 1, noNaN: true }),
          failureCount: fc.integer({ min: 1, max: 50 }),
          slowCallDuration: fc.integer({ min: 0, max: 2000 }),
          minimumCalls: fc.integer({ min: 1, max: 50 }),
          openDuration: fc.integer({ min: 0, max: 10_000 }),
          halfOpenCalls: fc.integer({ min: 1, max: 1000 }),
          probeTimeout: fc.integer({ min: 1, max: 10_000 }),
        },
        shared,
      ),
      (o) => {
        const r = typedOrValue(() => new b.CircuitBreaker(uniqueShared(o)), { fields: CB_FIELDS, given: o })
        if (r.value) {
          checkCircuitStats(r.value.stats())
          r.value.close()
        }
      },
    ),
  },
  {
    name: 'CircuitBreaker tryAcquire / recordSuccess / recordFailure never throw, for any duration and clock',
    runs: 2000,
    property: fc.property(
      clock,
      fc.constantFrom('errorRatio', 'slowCallRatio', 'errorCount'),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), anyValue), { maxLength: 200 }),
      (now, strategy, ops) => {
        const cb = new b.CircuitBreaker({
          now,
          strategy,
          minimumCalls: 3,
          ...(strategy === 'errorCount'
            ? { failureCount: 3 }
            : strategy === 'slowCallRatio'
              ? { slowCallRatio: 0.5, slowCallDuration: 10 }
              : { failureRatio: 0.5 }),
        })
        const seen = []
        cb.onStateChange((change) => seen.push(change))
        for (const [op, duration] of ops) {
          if (op === 0) assert.equal(typeof neverThrows('tryAcquire', () => cb.tryAcquire()), 'boolean')
          else if (op === 1) neverThrows('recordSuccess', () => cb.recordSuccess(duration))
          else neverThrows('recordFailure', () => cb.recordFailure(duration))
        }
        checkCircuitStats(cb.stats())
        for (const c of seen) assert.notEqual(c.from, c.to)
        cb.close()
      },
    ),
  },
  {
    name: "execute on both breakers: fn's outcome or BreakerOpenError, for any fn result",
    runs: 1000,
    property: fc.asyncProperty(anyValue, fc.boolean(), async (result, sre) => {
      const breaker = sre ? new b.SreBreaker({ now: () => 0 }) : new b.CircuitBreaker({ now: () => 0 })
      const fn = typeof result === 'function' ? result : () => result
      const r = await typedOrResolved(() => breaker.execute(fn), {}).catch((e) => ({ userError: e }))
      if (r.error) assert.ok(r.error instanceof b.BreakerOpenError)
      breaker.close()
    }),
  },
  {
    name: 'execute with any options: the outcome, BreakerOpenError, or a typed error naming options or the signal',
    runs: 1000,
    property: fc.asyncProperty(executeOptions, fc.boolean(), async (options, sre) => {
      const breaker = sre ? new b.SreBreaker({ now: () => 0 }) : new b.CircuitBreaker({ now: () => 0 })
      const r = await typedOrResolved(() => breaker.execute(() => 1, options), { argumentsNamed: ['options'] })
      if (r.error && !(r.error instanceof b.InvalidArgumentError))
        assert.ok(b.isAbortedError(r.error) || b.isBreakerOpenError(r.error), String(r.error))
      else if (!r.error) assert.equal(r.value, 1)
      breaker.close()
    }),
  },
  {
    name: 'onStateChange with any listener: a Disposable or a typed error',
    runs: 1000,
    property: fc.property(anyValue, (listener) => {
      const cb = new b.CircuitBreaker({ now: () => 0 })
      const r = typedOrValue(() => cb.onStateChange(listener), { argumentsNamed: ['listener'] })
      if (r.value) r.value.dispose()
      cb.close()
    }),
  },
  {
    name: 'BreakerGroup: any options, keys and factories give breakers or typed errors; the group stays bounded',
    runs: 1000,
    property: fc.property(
      options(
        { maxKeys: fc.integer({ min: 1, max: 5 }), idleTimeout: fc.integer({ min: 1, max: 100 }), now: clock },
        { shared: fc.constantFrom('grp-fuzz', 'x'.repeat(65)) },
      ),
      fc.array(anyValue, { maxLength: 20 }),
      (o, keys) => {
        if (o && typeof o === 'object' && o.shared === 'grp-fuzz') o.shared = uniqueName('grp')
        const group = typedOrValue(() => new b.BreakerGroup((k, s) => new b.SreBreaker({ shared: s }), o), {
          fields: ['maxKeys', 'idleTimeout', 'shared', 'now', 'factory'],
          given: o,
        }).value
        if (!group) return
        for (const k of keys) {
          const r = typedOrValue(() => group.get(k), { argumentsNamed: ['key'] })
          if (r.value) assert.equal(typeof r.value.tryAcquire(), 'boolean')
          typedOrValue(() => group.has(k), {})
          typedOrValue(() => group.delete(k), {})
        }
        assert.ok(
          group.size <=
            (o && typeof o.maxKeys === 'number' && Number.isInteger(o.maxKeys) && o.maxKeys >= 1 ? o.maxKeys : 1000),
        )
        group.close()
        assert.equal(group.size, 0)
      },
    ),
  },
]
