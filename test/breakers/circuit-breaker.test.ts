import { describe, expect, it } from 'vitest'

import { BreakerOpenError, CircuitBreaker, type CircuitBreakerOptions, type CircuitStateChange } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'

function breaker(extra: CircuitBreakerOptions = {}) {
  const clock = new ManualClock(100_000)
  const cb = new CircuitBreaker({
    minimumCalls: 10,
    window: 10_000,
    buckets: 10,
    openDuration: 5000,
    halfOpenCalls: 2,
    now: clock.now,
    ...extra,
  } as CircuitBreakerOptions)
  return { clock, cb }
}

function outcomes(cb: CircuitBreaker, successes: number, failures: number, durationMs = 1) {
  for (let i = 0; i < successes; i++) cb.recordSuccess(durationMs)
  for (let i = 0; i < failures; i++) cb.recordFailure(durationMs)
}

function acquireAll(cb: CircuitBreaker, tries: number): number {
  let granted = 0
  for (let i = 0; i < tries; i++) if (cb.tryAcquire()) granted++
  return granted
}

describe('CircuitBreaker: errorRatio', () => {
  it('opens when at least minimumCalls calls reach the error ratio', () => {
    const { cb } = breaker()
    outcomes(cb, 6, 3)
    expect(cb.state).toBe('closed')
    cb.recordFailure(1) // 10 calls, 4 failed: 0.4 < 0.5
    expect(cb.state).toBe('closed')
    cb.recordFailure(1) // 11 calls, 5 failed: 0.45
    expect(cb.state).toBe('closed')
    cb.recordFailure(1) // 12 calls, 6 failed: 0.5
    expect(cb.state).toBe('open')
    expect(cb.tryAcquire()).toBe(false)
  })

  it('does not open below minimumCalls, and opens on the call that reaches it', () => {
    const { cb } = breaker()
    outcomes(cb, 3, 6)
    expect(cb.stats()).toMatchObject({ state: 'closed', calls: 9, badCalls: 6 })
    cb.recordSuccess(1)
    expect(cb.state).toBe('open')
  })

  it('forgets outcomes older than the window', () => {
    const { cb, clock } = breaker()
    outcomes(cb, 0, 9)
    clock.advance(10_000)
    outcomes(cb, 0, 9)
    expect(cb.stats()).toMatchObject({ state: 'closed', calls: 9 })
  })

  it('goes open -> half-open after openDuration, admits exactly halfOpenCalls probes, closes when they pass', () => {
    const { cb, clock } = breaker()
    outcomes(cb, 0, 10)
    expect(acquireAll(cb, 100)).toBe(0)
    clock.advance(4999)
    expect(acquireAll(cb, 100)).toBe(0)
    clock.advance(1)
    expect(acquireAll(cb, 100)).toBe(2)
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesIssued: 2, probesPassed: 0 })
    cb.recordSuccess(1)
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesPassed: 1 })
    cb.recordSuccess(1)
    expect(cb.state).toBe('closed')
    expect(acquireAll(cb, 100)).toBe(100)
    // Counting starts afresh: the ten failures that opened it are gone.
    expect(cb.stats()).toMatchObject({ calls: 0, badCalls: 0 })
    outcomes(cb, 0, 9)
    expect(cb.state).toBe('closed')
    cb.recordFailure(1)
    expect(cb.state).toBe('open')
  })

  it('reopens when a probe fails, for another openDuration', () => {
    const { cb, clock } = breaker()
    outcomes(cb, 0, 10)
    clock.advance(5000)
    expect(acquireAll(cb, 10)).toBe(2)
    cb.recordSuccess(1)
    cb.recordFailure(1)
    expect(cb.state).toBe('open')
    clock.advance(4999)
    expect(cb.tryAcquire()).toBe(false)
    clock.advance(1)
    expect(acquireAll(cb, 10)).toBe(2)
    // The first round's pass does not carry over.
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesPassed: 0 })
  })

  it('ignores outcomes of calls admitted before it opened', () => {
    const { cb, clock } = breaker()
    outcomes(cb, 0, 10)
    outcomes(cb, 50, 0) // late successes while open
    expect(cb.state).toBe('open')
    clock.advance(5000)
    expect(cb.state).toBe('open') // reading the state moves nothing: the next call does
    expect(cb.tryAcquire()).toBe(true)
    // The 50 late successes were not probes: the round starts with none passed.
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesIssued: 1, probesPassed: 0 })
    cb.recordSuccess(1) // the probe's outcome
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesIssued: 1, probesPassed: 1 })
    cb.recordSuccess(1) // not a probe's: this instance held one permit
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesPassed: 1 })
  })

  it('reading state or stats() never moves an open breaker to half-open', () => {
    const { cb, clock } = breaker()
    const seen: CircuitStateChange[] = []
    cb.onStateChange((change) => seen.push(change))
    outcomes(cb, 0, 10)
    clock.advance(60_000)
    for (let i = 0; i < 3; i++) {
      expect(cb.state).toBe('open')
      expect(cb.stats()).toMatchObject({ state: 'open', probesIssued: 0 })
    }
    expect(seen.map((c) => c.to)).toEqual(['open'])
    expect(cb.retryAfterMs()).toBe(0)
    expect(cb.tryAcquire()).toBe(true)
    expect(cb.state).toBe('half-open')
  })

  it('does not count the outcomes that tripped it after a close within the same bucket', () => {
    const { cb, clock } = breaker({ openDuration: 100, halfOpenCalls: 1 })
    outcomes(cb, 0, 10)
    clock.advance(100)
    expect(cb.tryAcquire()).toBe(true)
    cb.recordSuccess(1)
    expect(cb.state).toBe('closed')
    cb.recordFailure(1)
    expect(cb.stats()).toMatchObject({ state: 'closed', calls: 1, badCalls: 1 })
  })

  it('gives up on probes that never report after probeTimeout and hands the permits out again', () => {
    const { cb, clock } = breaker({ probeTimeout: 2000 })
    outcomes(cb, 0, 10)
    clock.advance(5000)
    expect(acquireAll(cb, 10)).toBe(2)
    clock.advance(1999)
    expect(cb.tryAcquire()).toBe(false)
    clock.advance(1)
    expect(acquireAll(cb, 10)).toBe(2)
    cb.recordSuccess(1)
    cb.recordSuccess(1)
    expect(cb.state).toBe('closed')
  })
})

describe('CircuitBreaker: slowCallRatio', () => {
  it('counts calls slower than slowCallDuration, successes and failures alike', () => {
    const { cb } = breaker({ strategy: 'slowCallRatio', slowCallDuration: 200 })
    outcomes(cb, 5, 4, 50) // fast: not bad, even the failures
    cb.recordSuccess(200) // not slower than 200
    expect(cb.stats()).toMatchObject({ state: 'closed', calls: 10, badCalls: 0 })
    outcomes(cb, 5, 4, 201)
    expect(cb.state).toBe('closed') // 9 of 19
    cb.recordFailure(500)
    expect(cb.state).toBe('open') // 10 of 20
  })

  it('reopens on a slow probe or a failed one, closes on fast successes', () => {
    const { cb, clock } = breaker({ strategy: 'slowCallRatio', slowCallDuration: 200, halfOpenCalls: 1 })
    outcomes(cb, 10, 0, 300)
    expect(cb.state).toBe('open')
    clock.advance(5000)
    expect(cb.tryAcquire()).toBe(true)
    cb.recordSuccess(300)
    expect(cb.state).toBe('open')
    clock.advance(5000)
    expect(cb.tryAcquire()).toBe(true)
    cb.recordFailure(10)
    expect(cb.state).toBe('open')
    clock.advance(5000)
    expect(cb.tryAcquire()).toBe(true)
    cb.recordSuccess(10)
    expect(cb.state).toBe('closed')
  })
})

describe('CircuitBreaker: errorCount', () => {
  it('opens on the failureCount-th failure in the window whatever the successes', () => {
    const { cb, clock } = breaker({ strategy: 'errorCount', failureCount: 5, minimumCalls: 1 })
    outcomes(cb, 1000, 4)
    expect(cb.state).toBe('closed')
    clock.advance(10_000)
    outcomes(cb, 0, 4)
    expect(cb.state).toBe('closed')
    cb.recordFailure(1)
    expect(cb.state).toBe('open')
    expect(cb.stats()).toMatchObject({ strategy: 'errorCount', calls: 5, badCalls: 5, badRatio: 1 })
  })
})

describe('CircuitBreaker: events and execute', () => {
  it('reports each state change it sees, until the listener is disposed', () => {
    const { cb, clock } = breaker({ halfOpenCalls: 1 })
    const seen: CircuitStateChange[] = []
    const subscription = cb.onStateChange((change) => seen.push(change))
    outcomes(cb, 0, 10)
    clock.advance(5000)
    cb.tryAcquire()
    cb.recordSuccess(1)
    expect(seen).toEqual([
      { from: 'closed', to: 'open', at: 100_000 },
      { from: 'open', to: 'half-open', at: 105_000 },
      { from: 'half-open', to: 'closed', at: 105_000 },
    ])
    subscription.dispose()
    outcomes(cb, 0, 10)
    expect(cb.state).toBe('open')
    expect(seen).toHaveLength(3)
  })

  it('a listener that throws neither breaks the call nor the other listeners', async () => {
    const { cb } = breaker()
    const seen: string[] = []
    cb.onStateChange(() => {
      throw new Error('listener bug')
    })
    cb.onStateChange((c) => seen.push(c.to))
    const uncaught: unknown[] = []
    const handler = (e: unknown) => uncaught.push(e)
    process.on('uncaughtException', handler)
    expect(() => outcomes(cb, 0, 10)).not.toThrow()
    await new Promise((r) => setImmediate(r))
    process.off('uncaughtException', handler)
    expect(seen).toEqual(['open'])
    expect(uncaught).toHaveLength(1)
  })

  it('execute times the call itself and rejects with BreakerOpenError (with retryAfter) when open', async () => {
    const { cb, clock } = breaker({ strategy: 'slowCallRatio', slowCallDuration: 5, minimumCalls: 2, slowCallRatio: 1 })
    const busy = () => {
      const until = performance.now() + 15
      while (performance.now() < until) {
        // slower than slowCallDuration, without a timer
      }
      return 'slow'
    }
    await expect(cb.execute(busy)).resolves.toBe('slow')
    expect(cb.stats()).toMatchObject({ state: 'closed', calls: 1, badCalls: 1 })
    await expect(cb.execute(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(cb.stats()).toMatchObject({ state: 'closed', calls: 2, badCalls: 1 })
    await expect(cb.execute(busy)).resolves.toBe('slow')
    await expect(cb.execute(busy)).resolves.toBe('slow')
    expect(cb.stats()).toMatchObject({ calls: 4, badCalls: 3 })
    expect(cb.state).toBe('closed')

    const tripped = breaker({ strategy: 'slowCallRatio', slowCallDuration: 5, minimumCalls: 1, slowCallRatio: 1 })
    await tripped.cb.execute(busy)
    expect(tripped.cb.state).toBe('open')
    tripped.clock.advance(1200)
    const refused = await tripped.cb.execute(() => 1).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(BreakerOpenError)
    expect(tripped.cb.retryAfterMs()).toBe(3800)
    expect((refused as BreakerOpenError).retryAfter).toBe(4) // seconds, rounded up, as in a Retry-After header
    expect(clock.now()).toBe(100_000)
  })
})
