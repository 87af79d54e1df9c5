// The same components driven to known states, for the Prometheus and OpenTelemetry tests.
import {
  BbrLimiter,
  BreakerGroup,
  BulkheadPool,
  CircuitBreaker,
  HeavyKeeper,
  HotKeyCache,
  HotParameterLimiter,
  KeyConcurrencyLimiter,
  KeyedLimiter,
  RetryBudget,
  SlidingWindowLimiter,
  SreBreaker,
  TokenBucket,
} from '../../lib/index'
import { httpGuard } from '../../lib/entries/http'
import { followRules } from '../../lib/ops/fleet/rules-follower'
import { simulateUpstream } from '../adaptive/upstream-sim'
import { ManualClock } from '../helpers/manual-clock'
import { MemoryRuleSource } from '../helpers/memory-rule-source'
import { uniqueName } from '../helpers/unique-name'

export function drivenComponents() {
  const clock = new ManualClock(1000)
  const now = clock.now
  // maxInFlight is the floor, 2: two normal requests fit, three low ones are shed (2 > 2 x 0.8), one critical fits.
  const limiter = new BbrLimiter({ signal: () => 1000, queueDelay: false, minInFlight: 2, now })
  limiter.tryAcquire('normal')
  limiter.tryAcquire('normal')
  for (let i = 0; i < 3; i++) limiter.tryAcquire('low')
  limiter.tryAcquire('critical')

  const sre = new SreBreaker({ success: 0.5, minimumCalls: 10, now, random: () => 0.99 })
  for (let i = 0; i < 5; i++) sre.recordSuccess()
  for (let i = 0; i < 20; i++) sre.recordFailure()

  const circuit = new CircuitBreaker({ minimumCalls: 5, now })
  for (let i = 0; i < 5; i++) circuit.recordFailure(1)

  const group = new BreakerGroup(() => new SreBreaker({ minimumCalls: 10, now, random: () => 0.99 }), { now })
  for (let i = 0; i < 20; i++) group.get('healthy')!.recordSuccess()
  for (let i = 0; i < 20; i++) group.get('failing')!.recordFailure()

  const topk = new HeavyKeeper({ k: 4, seed: 1 })
  for (let i = 0; i < 30; i++) topk.add('x')
  for (let i = 0; i < 20; i++) topk.add('y')

  const cache = new HotKeyCache<string>({ k: 4, seed: 1, now })
  cache.addWithValue('product-1', 'value')

  const bucket = new TokenBucket({ rate: 10, burst: 20, now })
  bucket.tryAcquire(5)
  const window = new SlidingWindowLimiter({ limit: 10, window: 1000, now })
  window.tryAcquire(4)
  const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now }), { now })
  keyed.tryAcquire('a')
  keyed.tryAcquire('b')

  const budget = new RetryBudget({ ratio: 0.1, minPerSecond: 0, now })
  for (let i = 0; i < 10; i++) budget.recordRequest()
  budget.tryAcquire()

  // Two requests in flight for 'acme' (its max), a third shed; one for 'globex'.
  const perKey = new KeyConcurrencyLimiter({ max: 2, now })
  perKey.tryAcquire('acme')
  perKey.tryAcquire('acme')
  perKey.tryAcquire('acme')
  perKey.tryAcquire('globex')

  // Two hot values (k 2) with 2 permits each: 'item-1' is refused its third; 'item-3' is not hot and takes the one
  // permit the others share, so 'item-4' is refused; a value that is not a string is refused and counted.
  const hotParameters = new HotParameterLimiter({
    k: 2,
    now,
    hot: () => new TokenBucket({ rate: 0.001, burst: 2, now }),
    others: new TokenBucket({ rate: 0.001, burst: 1, now }),
  })
  for (const value of ['item-1', 'item-1', 'item-1', 'item-2', 'item-3', 'item-4', 42 as never])
    hotParameters.tryAcquire(value)

  // A guard with a one-token rate limit in front of the limiter: the second request is answered 429; a connection
  // that holds its one admitted request: the next request on it is answered 429 too. Its priority function throws
  // for a request marked so, and its fallback throws: one application error of each source.
  const handler = httpGuard(() => undefined, {
    limiter: false,
    rateLimit: { limiter: new TokenBucket({ rate: 0.001, burst: 1, now }) },
    connectionConcurrency: 1,
    priority: (req) => {
      if (req.headers['x-break'] !== undefined) throw new Error('a bug in priority')
      return 'normal'
    },
    fallback: () => {
      throw new Error('a bug in the fallback')
    },
  })
  const request = { headers: {}, socket: { remoteAddress: '127.0.0.1' } } as never
  handler.guard.tryAcquire(request)
  handler.guard.tryAcquire(request)
  const connection = {}
  handler.guard.connections?.take(connection) // what the adapter counts for the request it admitted
  handler.guard.tryAcquire(request, connection)
  handler.guard.tryAcquire({ headers: { 'x-break': '1' }, socket: { remoteAddress: '127.0.0.1' } } as never)
  handler.guard.answer(request, 'rate-limit')

  // One upstream saturated at 3x its 400 req/s (its bulkhead sheds), one that was never called.
  // (on a clock of their own: the run takes simulated seconds, which the other components must not see pass)
  const upstreamClock = new ManualClock(1000)
  const bulkheads = new BulkheadPool({ now: upstreamClock.now })
  simulateUpstream(bulkheads.get('http://inventory:80')!, upstreamClock, [
    { rate: 1200, seconds: 3, concurrency: 8, serviceMs: 20 },
  ])
  bulkheads.get('http://pricing:80')

  // A host following a rule source that holds nothing yet: version 0, never heard (the metrics report it by itself).
  const rules = followRules({
    rules: new MemoryRuleSource(),
    namespace: uniqueName('obs')
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(-40),
    cacheDir: false,
    log: () => undefined,
  })

  const all = {
    limiter,
    sre,
    circuit,
    group,
    topk,
    cache,
    bucket,
    window,
    keyed,
    budget,
    handler,
    bulkheads,
    perKey,
    hotParameters,
    rules,
  }
  // The handler is an adapter, not a component: its guard holds no limiter of its own (limiter: false).
  const { handler: _adapter, ...components } = all
  return { clock, ...all, close: () => Object.values(components).forEach((c) => c.close()) }
}
