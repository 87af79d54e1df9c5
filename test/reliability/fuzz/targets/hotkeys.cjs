// HeavyKeeper, HotKeyCache, murmur3: options, keys of every shape (huge strings and byte arrays included), counts.
'use strict'
const {
  b,
  fc,
  assert,
  anyValue,
  weirdNumber,
  key,
  bytesKey,
  options,
  typedOrValue,
  neverThrows,
  isCount,
  uniqueName,
} = require('../kit.cjs')

const HK_FIELDS = ['k', 'width', 'depth', 'decay', 'minCount', 'shared', 'seed', 'maxMembers']
const CACHE_FIELDS = [
  'k',
  'capacity',
  'ttl',
  'autoCache',
  'minCount',
  'allow',
  'deny',
  'fadeEvery',
  'now',
  'shared',
  'maxMembers',
  'seed',
]
const anyKey = fc.oneof(key, bytesKey, anyValue)
const anyIncr = fc.oneof(fc.integer({ min: 0, max: 1000 }), weirdNumber, anyValue)
const rule = fc.oneof(
  fc.record(
    { key: fc.oneof(key, anyValue), ttl: fc.oneof(fc.integer({ min: 1, max: 100 }), anyValue) },
    { requiredKeys: ['key'] },
  ),
  fc.record({ pattern: fc.oneof(fc.constantFrom('^a', '(', '[', '.*', /b+/gy), anyValue) }),
  anyValue,
)

function checkList(list, k) {
  assert.ok(Array.isArray(list) && list.length <= k)
  for (let i = 0; i < list.length; i++) {
    assert.ok(isCount(list[i].count) && list[i].count > 0, 'a listed key has a count > 0')
    assert.ok(typeof list[i].key === 'string' || list[i].key instanceof Uint8Array)
    if (i > 0) assert.ok(list[i - 1].count >= list[i].count, 'count descending')
  }
}

module.exports = [
  {
    name: 'HeavyKeeper constructor: a sketch or a typed error naming the option',
    runs: 1500,
    property: fc.property(
      options(
        {
          k: fc.integer({ min: 1, max: 50 }),
          width: fc.integer({ min: 1, max: 4096 }),
          depth: fc.integer({ min: 1, max: 8 }),
          decay: fc.double({ min: 0.01, max: 0.99, noNaN: true }),
          minCount: fc.integer({ min: 0, max: 5 }),
          seed: fc.nat(),
          maxMembers: fc.integer({ min: 1, max: 8 }),
        },
        { shared: fc.constantFrom('hk-fuzz', 'x y') },
      ),
      (o) => {
        if (o && typeof o === 'object' && o.shared === 'hk-fuzz') o.shared = uniqueName('hk-fuzz')
        const r = typedOrValue(() => new b.HeavyKeeper(o), { fields: HK_FIELDS, given: o })
        if (r.value) {
          checkList(r.value.list(), r.value.k)
          r.value.close()
        }
      },
    ),
  },
  {
    name: 'HeavyKeeper add / addMany / count / fadingOnce: typed errors for bad keys and increments, counts stay sane',
    runs: 2000,
    property: fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 4 }), anyKey, anyIncr), { maxLength: 30 }),
      fc.boolean(),
      (ops, shared) => {
        const hk = new b.HeavyKeeper({
          k: 5,
          width: 64,
          depth: 3,
          seed: 1,
          shared: shared ? uniqueName('hk-ops') : undefined,
        })
        const expelled = []
        const sub = hk.onExpelled((item) => expelled.push(item))
        const expect = { argumentsNamed: ['key', 'incr', 'keys', 'epoch'] }
        for (const [op, k, incr] of ops) {
          if (op === 0) {
            assert.equal(typeof neverThrows('add', () => hk.add(k, incr)), 'boolean')
          } else if (op === 1) {
            const r = typedOrValue(() => hk.addMany([k, k], incr), expect)
            if (!r.error) assert.ok(isCount(r.value))
          } else if (op === 2) {
            const r = typedOrValue(() => hk.count(k), expect)
            if (!r.error) assert.ok(isCount(r.value))
          } else if (op === 3) {
            typedOrValue(() => hk.fadingOnce(incr), expect)
          } else {
            hk.fading()
          }
        }
        checkList(hk.list(), 5)
        assert.ok(isCount(hk.total))
        for (const item of expelled) assert.ok(isCount(item.count))
        sub.dispose()
        hk.close()
        assert.equal(hk.add('after close'), false)
      },
    ),
  },
  {
    name: 'HotKeyCache constructor and methods: a cache or typed errors; the cache stays within capacity',
    runs: 1000,
    property: fc.property(
      options({
        k: fc.integer({ min: 1, max: 20 }),
        capacity: fc.integer({ min: 1, max: 10 }),
        ttl: fc.integer({ min: 1, max: 100 }),
        autoCache: fc.boolean(),
        minCount: fc.nat(3),
        allow: fc.array(rule, { maxLength: 3 }),
        deny: fc.array(rule, { maxLength: 3 }),
        now: fc.func(weirdNumber),
        seed: fc.nat(),
      }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), anyKey, anyIncr), { maxLength: 30 }),
      (o, ops) => {
        if (o && typeof o === 'object' && o.fadeEvery !== undefined) delete o.fadeEvery // a timer: not for thousands of runs
        const cache = typedOrValue(() => new b.HotKeyCache(o), { fields: CACHE_FIELDS, given: o }).value
        if (!cache) return
        const expect = { argumentsNamed: ['key', 'incr'] }
        for (const [op, k, incr] of ops) {
          if (op === 0) neverThrows('add', () => cache.add(k, incr))
          else if (op === 1) neverThrows('addWithValue', () => cache.addWithValue(k, { v: 1 }, incr))
          else if (op === 2) typedOrValue(() => cache.get(k), expect)
          else typedOrValue(() => cache.delete(k), expect)
        }
        const capacity = o && Number.isInteger(o.capacity) && o.capacity >= 1 ? o.capacity : 1000
        assert.ok(cache.size <= capacity)
        checkList(cache.list(), cache.topk.k)
        cache.close()
        assert.equal(cache.size, 0)
      },
    ),
  },
  {
    name: 'murmur3: any key and seed give a uint32 or a typed error',
    runs: 3000,
    property: fc.property(anyKey, fc.oneof(fc.nat(), weirdNumber, anyValue), (k, seed) => {
      const r = typedOrValue(() => b.murmur3(k, seed), { argumentsNamed: ['key', 'seed'] })
      if (!r.error) assert.ok(Number.isInteger(r.value) && r.value >= 0 && r.value <= 0xffffffff)
    }),
  },
]
