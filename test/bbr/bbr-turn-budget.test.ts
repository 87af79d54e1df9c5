// The queueing-delay rule's turn budget (docs/rules/bbr.md): once a standing queue has lasted the interval, a
// request decided late in a loop turn has already waited behind the turn's earlier requests, and is shed; the
// budget holds until the loop idles. Deterministic: injected load, delay and turn age on a hand-moved clock, and a
// model of a worker's event loop (test/bbr/event-loop-sim.ts) for the goal.
import { describe, expect, it } from 'vitest'

import { BbrLimiter, Shed } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { waitFor } from '../helpers/wait-for'
import { simulateEventLoop } from './event-loop-sim'

function budgeted(withTurnAge = true, maxWait?: number) {
  const clock = new ManualClock()
  const input = { delay: 0, load: 1000, turnAge: 0, failing: false }
  const load = () => {
    if (input.failing) throw new Error('the signal failed')
    return input.load
  }
  const signal = withTurnAge
    ? { load, delay: () => input.delay, turnAge: () => input.turnAge }
    : { load, delay: () => input.delay }
  const limiter = new BbrLimiter({
    window: 1000,
    buckets: 10,
    minInFlight: 1000, // keep the in-flight rule out of these tests
    latency: false,
    now: clock.now,
    signal,
    queueDelay: { target: 10, interval: 100 },
    maxWait,
  })
  /** Offers `n` requests of a class over `ms`, each at turn age `age`; returns how many were admitted. */
  const offer = (n: number, ms: number, age: number, priority: 'critical' | 'high' | 'normal' | 'low' = 'normal') => {
    input.turnAge = age
    let admitted = 0
    for (let i = 0; i < n; i++) {
      clock.advance(ms / n)
      const token = limiter.tryAcquire(priority)
      if (token >= 0) {
        admitted++
        limiter.release(token)
      } else expect(token).toBe(Shed.queueDelay)
    }
    return admitted
  }
  return { limiter, input, offer }
}

describe('BbrLimiter: the turn budget of the queueing-delay rule', () => {
  it('is not applied while the delay is under target', () => {
    const { input, offer } = budgeted()
    input.delay = 5
    expect(offer(200, 400, 80)).toBe(200)
  })

  it('budgets turns at the whole target from the first measurement over target, before the queue stands', () => {
    const { input, offer } = budgeted()
    input.delay = 50
    offer(1, 1, 0) // the first measurement over target
    // Standing for less than the interval: normal is shed past the whole target (10), not yet past half of it.
    expect(offer(4, 40, 8)).toBe(4)
    expect(offer(4, 40, 11)).toBe(0)
    expect(offer(2, 2, 40, 'critical')).toBe(2)
    input.delay = 5 // a measurement under target ends it
    expect(offer(4, 40, 30)).toBe(4)
    input.delay = 50
    offer(20, 200, 0) // now the queue stands past the interval: the standing budget, half the target
    expect(offer(4, 40, 8)).toBe(0)
  })

  it('sheds what a turn decides past its budget once the queue stands, by class, and holds while saturated', () => {
    const { input, offer } = budgeted()
    input.delay = 50
    offer(20, 200, 0) // the queue stands past the interval: budgeting starts
    input.delay = 9 // the budget keeps the loop's turns short now
    offer(200, 2000, 0)
    // Late in a turn: normal is shed past half the target, critical only far later.
    expect(offer(100, 100, 6)).toBe(0)
    expect(offer(50, 50, 11, 'critical')).toBe(50)
    expect(offer(50, 50, 19, 'high')).toBeGreaterThan(0)
    expect(offer(50, 50, 21, 'high')).toBe(0)
    expect(offer(50, 50, 6, 'low')).toBe(0)
    expect(offer(50, 50, 200, 'critical')).toBe(0)
    // Early in a turn: admitted (what the admit fraction lets through: it recovered while the delay was low).
    expect(offer(100, 100, 1)).toBe(100)
  })

  it('ends when the loop idles', () => {
    const { input, offer } = budgeted()
    input.delay = 50
    offer(20, 200, 0)
    expect(offer(10, 10, 30)).toBe(0)
    input.load = 500 // the loop catches up
    input.delay = 1
    offer(300, 3000, 0)
    expect(offer(100, 100, 30)).toBe(100)
  })

  it("leaves a queue's waiter out, one per slot freed: a slot freed late in a turn goes to a waiter", async () => {
    const { limiter, input, offer } = budgeted(true, 1000)
    input.delay = 50
    offer(20, 200, 0)
    input.delay = 9
    offer(200, 2000, 0) // budgeting, the admit fraction recovered
    const held = [limiter.tryAcquire(), limiter.tryAcquire()]
    expect(Math.min(...held)).toBeGreaterThanOrEqual(0)
    // Late in the turn, within the target: a new arrival is shed by the budget, and waits (it may: a request decided
    // past the target would not, test/bbr/bbr-queue-burst.test.ts).
    input.turnAge = 8
    let finished = 0
    let open = () => {}
    const gate = new Promise<void>((resolve) => (open = resolve))
    // Each admitted waiter holds its slot until the gate opens.
    const waiters = [0, 1, 2].map(() =>
      limiter.execute(async () => {
        finished++
        await gate
        return 'ran'
      }),
    )
    await Promise.resolve()
    expect(finished).toBe(0)
    // A slot is freed in a turn as old: one waiter asks outside the budget and gets it; the next ones ask as
    // arrivals do, and the budget refuses them (they keep waiting).
    limiter.release(held[0])
    await new Promise((resolve) => setImmediate(resolve)) // the queue retries in a microtask
    expect(finished).toBe(1)
    limiter.release(held[1])
    await new Promise((resolve) => setImmediate(resolve))
    expect(finished).toBe(2)
    input.turnAge = 0 // early in a turn (a timer retry): the last waiter is admitted as an arrival would be
    await waitFor(() => finished === 3, { what: "the queue's timer to admit the last waiter" })
    open()
    await expect(Promise.all(waiters)).resolves.toEqual(['ran', 'ran', 'ran'])
    input.turnAge = 30
    expect(offer(10, 10, 30)).toBe(0) // arrivals are still budgeted
  })

  it('counts a load signal that throws while a waiter asks again as a refusal: it keeps waiting, nothing throws', async () => {
    const { limiter, input, offer } = budgeted(true, 1000)
    input.delay = 50
    offer(20, 200, 0)
    input.delay = 9
    offer(200, 2000, 0)
    const held = limiter.tryAcquire()
    expect(held).toBeGreaterThanOrEqual(0)
    input.turnAge = 8 // budgeted: the next request waits
    let ran = false
    const waiter = limiter.execute(async () => {
      ran = true
    })
    input.failing = true
    limiter.release(held) // the waiter's retry reads the signal, which throws (in a microtask: nothing to catch it)
    await new Promise((resolve) => setImmediate(resolve))
    expect(ran).toBe(false)
    input.failing = false
    expect(limiter.stats().queue?.length).toBe(1)
    // The waiter's exemption did not stay on: an arrival late in the turn is still budgeted.
    expect(offer(5, 1, 30)).toBe(0)
    input.turnAge = 0
    await waiter // the queue's timer retries it
    expect(ran).toBe(true)
  })

  it('is off without a turn age (injected signals without one): the admit fraction alone sheds', () => {
    const { input, offer } = budgeted(false)
    input.delay = 50
    offer(20, 200, 0)
    input.delay = 9
    offer(200, 2000, 0)
    expect(offer(100, 100, 500)).toBe(100)
  })
})

describe('BbrLimiter in front of a simulated event loop: where admitted requests wait', () => {
  // One worker of the CPU-bound cluster (8 ms of CPU, then 20 ms of waiting; 125 req/s), 10 % critical: 0.5x for
  // 3 s, then the load for 2 s (the transition) and 6 s (counted).
  const capacity = 125
  const run = (load: number, turnBudget: boolean, criticalEvery = 10) =>
    simulateEventLoop(
      [
        { rate: 0.5 * capacity, seconds: 3 },
        { rate: load * capacity, seconds: 2 },
        { rate: load * capacity, seconds: 6 },
      ],
      { turnBudget, criticalEvery },
    )
  const goodput = (r: { good: number }) => r.good / (6 * capacity)

  it('at 4x and 10x bounds the admitted p99 and keeps goodput, where the admit fraction alone lets turns grow', () => {
    const unloaded = run(0.5, true)[2].p99
    const [x4, x10] = [run(4, true)[2], run(10, true)[2]]
    const [blind4, blind10] = [run(4, false)[2], run(10, false)[2]]
    expect(goodput(x4)).toBeGreaterThanOrEqual(0.95)
    expect(x4.p99).toBeLessThanOrEqual(3 * unloaded)
    expect(x4.p99).toBeLessThan(0.7 * blind4.p99)
    // At 10x, refusing the other 9 requests of every 10 costs the worker about 11 % of its CPU in this model.
    expect(goodput(x10)).toBeGreaterThanOrEqual(0.87)
    expect(x10.p99).toBeLessThan(0.7 * blind10.p99)
    expect(x10.criticalGood / x10.criticalOffered).toBeGreaterThan(blind10.criticalGood / blind10.criticalOffered)
  })

  it('at 10x with critical traffic a tenth of capacity: admitted p99 within 2.5x unloaded, critical served in time', () => {
    const unloaded = run(0.5, true)[2].p99
    const x10 = run(10, true, 100)[2] // a critical request in 100 at 10x: 10 % of capacity
    // The goal is 2.5x; 2x leaves a margin for what the model leaves out (normal's budget of half the target:
    // 53 ms, against 64 ms with a whole target).
    expect(x10.p99).toBeLessThanOrEqual(2 * unloaded)
    expect(goodput(x10)).toBeGreaterThanOrEqual(0.87) // as above: refusals cost this model's worker 11 % of its CPU
    expect(x10.criticalGood).toBe(x10.criticalOffered)
  })

  it('with square-wave bursts of 1.2x for 200 ms: the burst is seen in its turns, admitted p99 within 2.5x unloaded', () => {
    // bench/overload/scenarios/burst.mjs: 1.2x for 200 ms, then 0.7x for 300 ms, 20 rounds after 3 s at 0.5x. A
    // burst is over before a standing queue has lasted the interval: only the early turn budget sees its backlog.
    const unloaded = run(0.5, true)[2].p99
    const steps = [{ rate: 0.5 * capacity, seconds: 3 }]
    for (let r = 0; r < 20; r++)
      steps.push({ rate: 1.2 * capacity, seconds: 0.2 }, { rate: 0.7 * capacity, seconds: 0.3 })
    const waves = simulateEventLoop(steps, { turnBudget: true }).slice(1)
    const admitted = waves.flatMap((r) => r.latencies).sort((a, b) => a - b)
    const p99 = admitted[Math.floor(0.99 * (admitted.length - 1))]
    const shed = waves.reduce((n, r) => n + r.shed, 0)
    const offered = waves.reduce((n, r) => n + r.offered, 0)
    // Without the early budget: p99 90 ms (3.2x unloaded), 94 of 1 120 shed (8.4 %), the cut held into the 0.7x phases.
    expect(p99).toBeLessThanOrEqual(2.5 * unloaded)
    expect(shed / offered).toBeLessThan(0.07)
    expect(waves.every((r) => r.criticalGood === r.criticalOffered)).toBe(true)
  })

  it('with fairness at 4x: 20 light tenants get what they ask beside a noisy one, total goodput near capacity', () => {
    // bench/overload/scenarios/fairness.mjs: one tenant sends 3.5x, 20 others 0.5x together (1 request in 8).
    const isLight = (i: number) => i % 8 === 7
    const keyOf = (i: number) => (isLight(i) ? `light-${((i - 7) / 8) % 20}` : 'noisy')
    const steps = [
      { rate: 0.5 * capacity, seconds: 3 },
      { rate: 4 * capacity, seconds: 2 },
      { rate: 4 * capacity, seconds: 8 },
    ]
    const fair = simulateEventLoop(steps, { turnBudget: true, criticalEvery: Infinity, keyOf, light: isLight })[2]
    const blind = simulateEventLoop(steps, { turnBudget: true, criticalEvery: Infinity, light: isLight })[2]
    expect(fair.lightGood / fair.lightOffered).toBeGreaterThanOrEqual(0.95)
    expect(fair.good / (8 * capacity)).toBeGreaterThanOrEqual(0.9)
    expect(blind.lightGood / blind.lightOffered).toBeLessThan(0.5)
  })
})
