// Shared components whose words another thread overwrites with random bytes while calls run (issue 13): the lock
// words of TokenBucket and SlidingWindowLimiter, the state and window words of the breakers and BbrLimiter. Every
// call must return an answer of its type within a bounded time: no throw, no crash, no hang.
'use strict'
const path = require('path')
const { Worker } = require('worker_threads')
const { b, fc, assert, neverThrows, uniqueName } = require('../kit.cjs')

// A call waits at most a few ms on shared memory; this leaves room for a preempted thread on a busy machine.
const SLOW_CALL_MS = 250

const components = {
  TokenBucket: { options: { rate: 1000, burst: 50 }, limiter: true },
  SlidingWindowLimiter: { options: { limit: 50, window: 1000, buckets: 10 }, limiter: true },
  CircuitBreaker: { options: { strategy: 'errorRatio', failureRatio: 0.5, minimumCalls: 5, openDuration: 20 } },
  SreBreaker: { options: { success: 0.6, minimumCalls: 5 } },
  BbrLimiter: { options: {} },
}

let writer
function startWriter() {
  writer = new Worker(path.join(__dirname, '..', 'live-word-writer.cjs'))
  writer.unref()
}
const reply = () => new Promise((resolve) => writer.once('message', resolve))

/** Runs one call, timed: its result, after checking it neither threw nor took long. */
function timed(what, fn) {
  const t = performance.now()
  const result = neverThrows(what, fn)
  const ms = performance.now() - t
  assert.ok(ms < SLOW_CALL_MS, `${what} took ${ms.toFixed(1)} ms`)
  return result
}

function call(component, kind, op) {
  if (components[kind].limiter) {
    if (op === 0) assert.equal(typeof timed('tryAcquire', () => component.tryAcquire()), 'boolean')
    else if (op === 1) assert.equal(typeof timed('retryAfterMs', () => component.retryAfterMs()), 'number')
    else timed('stats', () => component.stats())
    return
  }
  if (kind === 'BbrLimiter') {
    const token = timed('tryAcquire', () => component.tryAcquire(op % 4))
    assert.equal(typeof token, 'number')
    if (token >= 0) timed('release', () => component.release(token))
    return
  }
  if (op === 0 || op === 1) {
    const ok = timed('tryAcquire', () => component.tryAcquire())
    assert.equal(typeof ok, 'boolean')
    if (ok) timed('record', () => (op === 0 ? component.recordSuccess(1) : component.recordFailure(1)))
  } else if (op === 2) timed('state', () => component.state)
  else timed('stats', () => component.stats())
}

module.exports = [
  {
    name: 'live lock, breaker and window words overwritten by another thread while calls run: answers, no hang',
    runs: 300,
    property: fc.asyncProperty(
      fc.constantFrom(...Object.keys(components)),
      fc.array(fc.nat(3), { minLength: 50, maxLength: 400 }),
      fc.nat(),
      async (kind, ops, seed) => {
        if (writer === undefined) startWriter()
        const options = { ...components[kind].options, shared: uniqueName('fz-live') }
        const component = new b[kind](options)
        const started = reply()
        writer.postMessage({ kind, options, seed })
        assert.equal(await started, 'writing')
        try {
          for (let i = 0; i < ops.length; i++) {
            call(component, kind, ops[i])
            // Let the writer's turns interleave with the calls, as they would on a real host.
            if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve))
          }
        } finally {
          const stopped = reply()
          writer.postMessage({ stop: true })
          await stopped
          component.close()
        }
      },
    ),
    after: async () => {
      if (writer !== undefined) await writer.terminate()
    },
  },
]
