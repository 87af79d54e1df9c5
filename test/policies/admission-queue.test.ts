import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest'

import { BbrLimiter, type BbrLimiterOptions, InvalidOptionError, Shed } from '../../lib/index'
import { InboundGuard } from '../../lib/guards/inbound/inbound-guard'
import { AdmissionQueue } from '../../lib/admission/queue/admission-queue'
import { ManualClock } from '../helpers/manual-clock'
import { fullLimiter } from '../integrations/queue-scenarios'

const CRITICAL = 0
const NORMAL = 2
const LOW = 3

/** A queue in front of a pretend limiter with `slots` free slots; each waiter's answer lands in `answers`. */
function setup(maxWait = 100, maxQueue = 10) {
  const clock = new ManualClock(0)
  const state = { slots: 0, asked: 0 }
  const tryAdmit = (p: number) => {
    state.asked++
    if (state.slots === 0) return Shed.inFlight
    state.slots--
    return 1000 + p
  }
  const queue = new AdmissionQueue({ maxWait, maxQueue }, clock.now, tryAdmit)
  const answers: Array<[string, number]> = []
  const wait = (name: string, p = NORMAL) => queue.wait(p, undefined, (token) => answers.push([name, token]))
  return { clock, state, queue, answers, wait }
}

describe('AdmissionQueue', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('serves oldest first while the queue is young', () => {
    const { clock, state, queue, answers, wait } = setup()
    for (const name of ['a', 'b', 'c']) {
      wait(name)
      clock.advance(1)
    }
    state.slots = 2
    queue.drain()
    expect(answers.map(([name]) => name)).toEqual(['a', 'b'])
    expect(queue.stats()).toMatchObject({ length: 1, queued: 3, admitted: 2, lifo: false })
  })

  it('serves newest first once the oldest waiter is older than the target (a quarter of maxWait)', () => {
    const { clock, state, queue, answers, wait } = setup(100)
    wait('a')
    clock.advance(10)
    wait('b')
    clock.advance(20)
    wait('c') // the oldest is now 30 ms old: over the 25 ms target
    expect(queue.stats().lifo).toBe(true)
    state.slots = 2
    queue.drain()
    expect(answers.map(([name]) => name)).toEqual(['c', 'b'])
  })

  it('lets a higher class go first, whatever the order of arrival', () => {
    const { state, queue, answers, wait } = setup()
    wait('low', LOW)
    wait('normal', NORMAL)
    wait('critical', CRITICAL)
    state.slots = 2
    queue.drain()
    expect(answers).toEqual([
      ['critical', 1000 + CRITICAL],
      ['normal', 1000 + NORMAL],
    ])
  })

  it('sheds the waiters that waited maxWait with Shed.queueTimeout, oldest first', () => {
    const { clock, queue, answers, wait } = setup(100)
    wait('a')
    clock.advance(40)
    wait('b')
    clock.advance(59)
    queue.drain()
    expect(answers).toEqual([]) // a is 99 ms old
    clock.advance(1)
    queue.drain()
    expect(answers).toEqual([['a', Shed.queueTimeout]])
    clock.advance(40)
    queue.drain()
    expect(answers).toEqual([
      ['a', Shed.queueTimeout],
      ['b', Shed.queueTimeout],
    ])
    expect(queue.stats()).toMatchObject({ length: 0, timedOut: 2 })
  })

  it('never keeps a waiter past maxWait: the timer sheds it with nothing else happening', () => {
    const { clock, queue, answers, wait } = setup(40)
    wait('a')
    for (let t = 0; t < 40 && answers.length === 0; t++) {
      clock.advance(1)
      vi.advanceTimersByTime(1)
    }
    expect(answers).toEqual([['a', Shed.queueTimeout]])
    expect(clock.time).toBeLessThanOrEqual(40)
    expect(queue.length).toBe(0)
  })

  it('sheds a waiter at its own deadline (Shed.deadline) when that comes before maxWait, on its timer', () => {
    const { clock, queue, answers, wait } = setup(100)
    wait('a')
    queue.wait(NORMAL, undefined, (token) => answers.push(['own', token]), 30)
    wait('b')
    for (let t = 0; t < 30 && answers.length === 0; t++) {
      clock.advance(1)
      vi.advanceTimersByTime(1)
    }
    expect(answers).toEqual([['own', Shed.deadline]])
    expect(clock.time).toBe(30)
    expect(queue.stats()).toMatchObject({ length: 2, timedOut: 1 })
  })

  it('never admits a waiter past its own deadline, and serves the others as before', () => {
    const { clock, state, queue, answers, wait } = setup(100)
    queue.wait(NORMAL, undefined, (token) => answers.push(['own', token]), 5)
    wait('a')
    clock.advance(6)
    state.slots = 2
    queue.drain()
    expect(answers).toEqual([
      ['own', Shed.deadline],
      ['a', 1000 + NORMAL],
    ])
    expect(queue.length).toBe(0)
  })

  it('keeps its timer when a waiter’s callback throws: the other waiters still time out', () => {
    const { clock, queue, answers, wait } = setup(40)
    queue.wait(NORMAL, undefined, () => {
      throw new Error('a handler that throws')
    })
    clock.advance(10)
    wait('b')
    clock.advance(30)
    expect(() => vi.advanceTimersByTime(10)).toThrow('a handler that throws')
    clock.advance(10)
    vi.advanceTimersByTime(10)
    expect(answers).toEqual([['b', Shed.queueTimeout]])
  })

  it('admits a waiter on its timer when a slot frees elsewhere (another process)', () => {
    const { state, answers, wait } = setup(100)
    wait('a')
    state.slots = 1
    vi.advanceTimersByTime(10)
    expect(answers).toEqual([['a', 1000 + NORMAL]])
  })

  it('retries once per burst of releases, in a microtask', async () => {
    const { state, queue, answers, wait } = setup()
    wait('a')
    state.slots = 1
    queue.slotFreed()
    queue.slotFreed()
    expect(answers).toEqual([])
    await Promise.resolve()
    expect(answers).toEqual([['a', 1000 + NORMAL]])
    expect(state.asked).toBe(1)
  })

  it('frees the place of a cancelled waiter, which is never answered', () => {
    const { state, queue, answers, wait } = setup(100, 2)
    const a = wait('a')
    wait('b')
    expect(queue.hasRoom).toBe(false)
    expect(a.cancel()).toBe(true)
    expect(a.cancel()).toBe(false)
    expect(queue.hasRoom).toBe(true)
    state.slots = 5
    queue.drain()
    expect(answers).toEqual([['b', 1000 + NORMAL]])
    expect(queue.stats()).toMatchObject({ abandoned: 1, admitted: 1, length: 0 })
  })

  it('keeps memory bounded when waiters in the middle are cancelled', () => {
    const { queue, wait } = setup(100, 4)
    for (let i = 0; i < 10_000; i++) {
      const w = wait(`w${i}`) // three of the four places stay taken, the fourth is taken and given back
      if (i >= 3) w.cancel()
      expect(queue.hasRoom).toBe(true)
    }
    const lists = (queue as unknown as { classes: unknown[][] }).classes
    expect(lists[NORMAL].length).toBeLessThanOrEqual(3 * 4)
  })

  it('sheds every waiter on close and takes no more', () => {
    const { queue, answers, wait } = setup()
    wait('a')
    queue.close()
    expect(answers).toEqual([['a', Shed.queueTimeout]])
    expect(queue.hasRoom).toBe(false)
  })
})

describe('BbrLimiter with maxWait', () => {
  function limiter(extra: BbrLimiterOptions = {}) {
    const { limiter: l, clock, releaseHeld } = fullLimiter(100, extra)
    return { l, clock, releaseHeld }
  }

  it('queues a refused execute() and runs it when a slot is freed, released exactly once', async () => {
    const { l, releaseHeld } = limiter()
    let ran = 0
    const result = l.execute(async () => ++ran)
    await Promise.resolve()
    expect(ran).toBe(0)
    expect(l.stats()).toMatchObject({ shedInFlight: 0, queue: { length: 1, queued: 1 } })
    releaseHeld()
    await expect(result).resolves.toBe(1)
    const s = l.stats()
    expect(s).toMatchObject({ inFlight: 0, shed: 0, invalidReleases: 0, queue: { length: 0, admitted: 1 } })
    expect(s.admitted).toBe(4)
    l.close()
  })

  it('gives a slot freed while requests wait to them, not to an arrival in the same turn', async () => {
    const { l, releaseHeld } = limiter()
    const order: string[] = []
    const queued = l.execute(async () => order.push('waiter'))
    await Promise.resolve()
    releaseHeld()
    // Same turn as the release: the drain has not run yet. The arrival is refused and waits behind.
    const arrival = l.execute(async () => order.push('arrival'))
    await Promise.all([queued, arrival])
    expect(order).toEqual(['waiter', 'arrival'])
    l.close()
  })

  it('waits no longer than a deadline leaves for the service time (Shed.deadline)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    onTestFinished(() => void vi.useRealTimers())
    const { l, clock } = limiter({ maxWait: 100 })
    const answers: number[] = []
    l.waitForSlot(Shed.inFlight, NORMAL, undefined, (token) => answers.push(token), 21)
    // expectedServiceMs() is 1 before any response time: the wait ends at 20 ms.
    clock.advance(19)
    vi.advanceTimersByTime(19)
    expect(answers).toEqual([])
    clock.advance(1)
    vi.advanceTimersByTime(1)
    expect(answers).toEqual([Shed.deadline])
    l.close()
  })

  it('rejects with OverloadError(queue-timeout) after maxWait, the function never run', async () => {
    const { l, clock } = limiter({ maxWait: 20 })
    const fn = vi.fn(async () => 1)
    const result = l.execute(fn)
    clock.advance(20)
    await expect(result).rejects.toMatchObject({ code: 'ERR_BULWARK_OVERLOAD', reason: 'queue-timeout' })
    expect(fn).not.toHaveBeenCalled()
    expect(l.stats().queue).toMatchObject({ timedOut: 1, length: 0 })
    l.close()
  })

  it('frees the place of a caller that aborts while waiting (AbortedError)', async () => {
    const { l } = limiter()
    const controller = new AbortController()
    const result = l.execute(async () => 1, { signal: controller.signal })
    controller.abort()
    await expect(result).rejects.toMatchObject({ code: 'ERR_BULWARK_ABORTED' })
    expect(l.stats().queue).toMatchObject({ abandoned: 1, length: 0 })
    l.close()
  })

  it('sheds with the limiter’s own reason when the queue is full, and counts it', async () => {
    const { l } = limiter({ maxQueue: 1 })
    const first = l.execute(async () => 1)
    await expect(l.execute(async () => 2)).rejects.toMatchObject({ reason: 'in-flight' })
    expect(l.stats()).toMatchObject({ shedInFlight: 1, queue: { full: 1, length: 1 } })
    l.close() // the waiter is shed on close
    await expect(first).rejects.toMatchObject({ reason: 'queue-timeout' })
  })

  it('has no queue by default, and validates maxWait and maxQueue', async () => {
    const { l } = limiter({ maxWait: undefined })
    expect(l.stats().queue).toBeUndefined()
    await expect(l.execute(async () => 1)).rejects.toMatchObject({ reason: 'in-flight' })
    l.close()
    expect(() => new BbrLimiter({ maxWait: -1 })).toThrow(InvalidOptionError)
    expect(() => new BbrLimiter({ maxWait: -1 })).toThrow(/maxWait/)
    expect(() => new BbrLimiter({ maxQueue: 5 })).toThrow(/maxQueue/)
    expect(() => new BbrLimiter({ maxWait: 10, maxQueue: 0 })).toThrow(/maxQueue/)
  })
})

describe('inbound guard options', () => {
  const access = { header: () => undefined, address: () => undefined }

  it('gives maxWait and maxQueue to the limiter the guard creates', () => {
    const guard = new InboundGuard({ limiter: { signal: () => 0 }, maxWait: 25, maxQueue: 7 }, access)
    expect(guard.limiter?.stats().queue).toMatchObject({ maxWait: 25, maxQueue: 7, length: 0 })
    guard.close()
  })

  it('refuses them with a limiter instance or none, and bad values by their own name', () => {
    const limiter = new BbrLimiter()
    expect(() => new InboundGuard({ limiter, maxWait: 25 }, access)).toThrow(/maxWait/)
    expect(() => new InboundGuard({ limiter: false, maxQueue: 2 }, access)).toThrow(/maxQueue/)
    expect(() => new InboundGuard({ maxWait: 'soon' as never }, access)).toThrow(/maxWait/)
    limiter.close()
  })
})
