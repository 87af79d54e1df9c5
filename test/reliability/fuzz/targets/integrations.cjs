// Framework adapters: every factory with any options (a middleware or a typed error), and the inbound decision with
// requests whose headers and addresses are anything at all.
'use strict'
const { b, fc, assert, anyValue, anySmall, weirdNumber, options, typedOrValue, neverThrows } = require('../kit.cjs')

const BBR_FIELDS = [
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
// An adaptive limiter given as options reports its own option names (`window`, not `limiter.window`).
const INBOUND_FIELDS = [
  'limiter',
  'rateLimit',
  'priorityHeader',
  'trustPriority',
  'priority',
  'defaultPriority',
  'retryAfter',
  'retryAfterJitter',
  'random',
  ...BBR_FIELDS,
]
const BREAKER_FIELDS = [
  'components',
  'breakers',
  'breaker',
  'success',
  'request',
  'window',
  'buckets',
  'countRejections',
  'shared',
  'maxMembers',
  'now',
  'random',
]
const inbound = {
  limiter: fc.oneof(
    fc.constant(false),
    fc.record({ signal: fc.constant(() => 0), minInFlight: fc.nat(5) }),
    fc.record({ window: anySmall }),
  ),
  rateLimit: fc.oneof(
    fc.record({ limiter: fc.constant(new b.TokenBucket({ rate: 5, burst: 2, now: () => 0 })) }),
    fc.record({ limiter: anySmall, key: anySmall }),
  ),
  priorityHeader: fc.oneof(fc.constantFrom('x-priority', false, 'bad header', ''), anySmall),
  priority: fc.func(fc.oneof(fc.constantFrom('critical', 'low', 0, 3), anySmall)),
  defaultPriority: fc.constantFrom('critical', 'high', 'normal', 'low', 'urgent'),
  trustPriority: fc.func(fc.oneof(fc.boolean(), anySmall)),
  retryAfter: fc.oneof(fc.nat(100), weirdNumber),
  retryAfterJitter: fc.oneof(fc.nat(10), weirdNumber),
  random: fc.constantFrom(
    Math.random,
    () => 0.999,
    () => NaN,
    () => -1,
    () => 7,
  ),
}
const grpc = require('@grpc/grpc-js')

/** The options with the real grpc module added (a plain object only: spreading a 4 MiB byte array is slow). */
const withGrpc = (o) => (o && typeof o === 'object' && !ArrayBuffer.isView(o) ? { grpc, ...o } : o)

function closeAll(made) {
  if (!made) return
  made.guard?.close?.()
  made.close?.()
}

const factories = [
  ['httpGuard', (o) => b.httpGuard(() => undefined, o), INBOUND_FIELDS],
  ['expressGuard', (o) => b.expressGuard(o), INBOUND_FIELDS],
  ['koaGuard', (o) => b.koaGuard(o), INBOUND_FIELDS],
  ['grpcServerGuard', (o) => b.grpcServerGuard(withGrpc(o)), [...INBOUND_FIELDS, 'grpc']],
  [
    'grpcClientGuard',
    (o) => b.grpcClientGuard(withGrpc(o)),
    [...BREAKER_FIELDS, 'per', 'target', 'failureCodes', 'grpc'],
  ],
  [
    'undiciGuard',
    (o) => b.undiciGuard(o),
    [...BREAKER_FIELDS, 'budget', 'attempts', 'baseDelay', 'maxDelay', 'isFailure', 'retryMethods', 'random'],
  ],
]

module.exports = [
  ...factories.map(([name, make, fields]) => ({
    name: `${name}: any options give an adapter or a typed error naming the option`,
    runs: 1000,
    property: fc.property(
      options({
        ...inbound,
        per: fc.constantFrom('method', 'target', 'both'),
        target: anySmall,
        failureCodes: fc.array(fc.nat(16)),
        attempts: fc.nat(5),
        baseDelay: fc.nat(10),
        maxDelay: fc.nat(10),
        retryMethods: fc.array(fc.constantFrom('GET', 'PUT', 'post')),
        breaker: fc.record({ success: anySmall }, { requiredKeys: [] }),
      }),
      (o) => closeAll(typedOrValue(() => make(o), { fields, given: o }).value),
    ),
  })),
  {
    name: 'the inbound decision: any request gives a token or a shed reason, release never throws, nothing leaks',
    runs: 2000,
    property: fc.property(
      fc.array(fc.tuple(anyValue, anyValue), { maxLength: 20 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.boolean(),
      fc.func(fc.oneof(fc.boolean(), anySmall)),
      (requests, load, rate, trustPriority) => {
        const middleware = b.httpGuard(() => undefined, {
          limiter: { signal: () => load, minInFlight: 3, now: () => 0 },
          trustPriority,
          retryAfterJitter: 3,
          random: () => 0.999,
          rateLimit: rate
            ? { limiter: new b.KeyedLimiter(() => new b.TokenBucket({ rate: 1, burst: 2, now: () => 0 })) }
            : undefined,
        })
        const guard = middleware.guard
        const tokens = []
        for (const [header, address] of requests) {
          const req = { headers: { 'x-priority': header }, socket: { remoteAddress: address } }
          const token = neverThrows('tryAcquire', () => guard.tryAcquire(req))
          assert.ok(
            token >= 0 || token === b.Shed.inFlight || token === b.Shed.queueDelay || token === b.Shed.rateLimit,
            `token ${token}`,
          )
          if (token >= 0) tokens.push(token)
          assert.ok(
            token >= 0 || (guard.retryAfter >= 1 && guard.retryAfter <= 86_400),
            `retryAfter ${guard.retryAfter}`,
          )
        }
        for (const t of tokens) neverThrows('release', () => guard.release(t))
        assert.equal(guard.stats().limiter.inFlight, 0)
        guard.close()
      },
    ),
  },
]
