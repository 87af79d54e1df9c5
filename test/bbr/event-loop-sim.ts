import { vi } from 'vitest'
import { BbrLimiter } from '../../lib/index'

/**
 * A deterministic model of one worker of bench/overload's CPU-bound cluster as Node runs it: requests wait in the
 * kernel until the loop's next turn reads them; a turn first fires the due timers (each admitted request answers
 * `waitMs` after its handler), then reads every request that arrived before it began and decides each in turn, on
 * the limiter's own hand-moved clock. Reading a request costs `parseMs`, answering a refusal `shedMs`, an admitted
 * handler `cpuMs`. So an admitted request waits in the kernel for the previous turn to end, then behind the earlier
 * requests of its own turn: the wait the limiter cannot see at the socket. Arrivals are at a constant rate, every
 * `criticalEvery`-th critical. The limiter reads injected signals: load (the loop's busy share over 250 ms), delay
 * (the longest turn of the last 50 ms, or the one running) and, with `turnBudget`, the turn's age.
 *
 * With `maxWait`, a refused request waits in the limiter's admission queue as execute() makes it wait in the bench's
 * server: a release (a timer callback) lets the waiters ask again in the microtask after it, and an admitted waiter
 * runs its handler there; the queue's poll timer is a timer of the model, every 10 ms while anyone waits. A waiter
 * shed from the queue costs `shedMs` when it is; its latency is its answer's, as any admitted request's.
 */
export interface EventLoopSimOptions {
  cpuMs?: number
  waitMs?: number
  parseMs?: number
  shedMs?: number
  sloMs?: number
  criticalEvery?: number
  /** Give the limiter the turn's age (the queueing-delay rule then budgets turns). */
  turnBudget?: boolean
  /** Request i's key (a tenant): with it, the limiter sheds with fairness. */
  keyOf?: (i: number) => string
  /** Which requests the result's `light*` counts cover. */
  light?: (i: number) => boolean
  /** The limiter's `maxWait` (a refused request waits for a slot); absent: shed at once. */
  maxWait?: number
}

export interface LoopStepResult {
  offered: number
  shed: number
  /** Admitted requests answered within sloMs of their arrival. */
  good: number
  admitted: number
  /** Admitted requests' time from arrival to answer, p99 (ms). */
  p99: number
  /** Admitted requests' times from arrival to answer, sorted (ms). */
  latencies: number[]
  criticalOffered: number
  criticalGood: number
  lightOffered: number
  lightGood: number
}

const LOAD_SPAN = 250
const DELAY_SPAN = 50
/** How often the admission queue looks for slots while anyone waits (lib/admission/queue/admission-queue.ts, MAX_POLL). */
const QUEUE_POLL = 10

/** Runs `steps` ({ rate in req/s, seconds }) through one simulated worker; one result per step. */
export function simulateEventLoop(
  steps: { rate: number; seconds: number }[],
  options: EventLoopSimOptions = {},
): LoopStepResult[] {
  const { cpuMs = 8, waitMs = 20, parseMs = 0.05, shedMs = 0.05, sloMs = 500, criticalEvery = 10, keyOf } = options
  const light = options.light ?? (() => false)
  let now = 1000
  const start = now
  // Busy turns [start, end] of the last LOAD_SPAN, and the turn running (turnAt >= 0).
  const turns: [number, number][] = []
  let turnAt = -1
  let firstDecidedAt = -1
  const load = () => {
    let busy = turnAt >= 0 ? now - turnAt : 0
    for (const [s, e] of turns) busy += Math.max(0, e - Math.max(s, now - LOAD_SPAN))
    return Math.min(1000, (1000 * busy) / LOAD_SPAN)
  }
  const delay = () => {
    let d = turnAt >= 0 ? now - turnAt : 0
    for (const [s, e] of turns) if (e >= now - DELAY_SPAN && e - s > d) d = e - s
    return d
  }
  const turnAge = () => {
    if (firstDecidedAt < 0) firstDecidedAt = now
    return now - firstDecidedAt
  }
  const limiter = new BbrLimiter({
    now: () => now,
    signal: options.turnBudget ? { load, delay, turnAge } : { load, delay },
    fairness: keyOf !== undefined,
    maxWait: options.maxWait,
  })
  const queued = options.maxWait !== undefined && options.maxWait > 0
  // The queue's microtasks (a release's drain) run where Node runs them: after the callback that queued them.
  if (queued) vi.useFakeTimers({ toFake: ['queueMicrotask'] })
  try {
    return run()
  } finally {
    limiter.close()
    if (queued) vi.useRealTimers()
  }

  function run(): LoopStepResult[] {
    // Arrivals, and which step each belongs to.
    const arrivals: number[] = []
    const stepOf: number[] = []
    let t = start
    steps.forEach((step, s) => {
      const n = Math.round(step.rate * step.seconds)
      for (let i = 0; i < n; i++) {
        arrivals.push(t + (i * 1000) / step.rate)
        stepOf.push(s)
      }
      t += step.seconds * 1000
    })
    const end = t
    const results: LoopStepResult[] = steps.map(() => ({
      offered: 0,
      shed: 0,
      good: 0,
      admitted: 0,
      p99: 0,
      latencies: [],
      criticalOffered: 0,
      criticalGood: 0,
      lightOffered: 0,
      lightGood: 0,
    }))
    const latencies: number[][] = steps.map(() => [])
    const timers: [number, number, number][] = [] // [at, token, request], in time order
    let next = 0
    let pollAt = Infinity
    // Admits request i (its handler runs now), or answers its refusal.
    const decided = (i: number, token: number) => {
      const r = results[stepOf[i]]
      if (token < 0) {
        r.shed++
        now += shedMs
        return
      }
      r.admitted++
      now += cpuMs
      insert(timers, [now + waitMs, token, i])
    }
    const microtasks = () => {
      if (!queued) return
      vi.runAllTicks()
      if (pollAt === Infinity && (limiter.queue?.length ?? 0) > 0) pollAt = now + QUEUE_POLL
    }

    while (next < arrivals.length || timers.length > 0) {
      const due = Math.min(
        next < arrivals.length ? arrivals[next] : Infinity,
        timers.length ? timers[0][0] : Infinity,
        pollAt,
      )
      if (due > now) now = due // idle in poll until something happens
      turnAt = now
      firstDecidedAt = -1
      if (pollAt <= now) {
        ;(limiter.queue as NonNullable<typeof limiter.queue>).drain()
        pollAt = Infinity
        microtasks()
      }
      while (timers.length > 0 && timers[0][0] <= now) {
        const [, token, i] = timers.shift() as [number, number, number]
        limiter.release(token)
        microtasks()
        const r = results[stepOf[i]]
        const latency = now - arrivals[i]
        latencies[stepOf[i]].push(latency)
        if (latency <= sloMs) {
          r.good++
          if (i % criticalEvery === 0) r.criticalGood++
          if (light(i)) r.lightGood++
        }
      }
      // Requests that arrived before this turn began; later ones wait in the kernel for the next turn.
      const readUntil = now
      while (next < arrivals.length && arrivals[next] <= readUntil) {
        const i = next++
        const r = results[stepOf[i]]
        const critical = i % criticalEvery === 0
        r.offered++
        if (critical) r.criticalOffered++
        if (light(i)) r.lightOffered++
        now += parseMs
        const p = critical ? 0 : 2
        const token = limiter.tryAcquire(p, keyOf?.(i))
        if (token >= 0 || !queued || limiter.waitForSlot(token, p, keyOf?.(i), (t) => decided(i, t)) === undefined)
          decided(i, token)
        microtasks()
      }
      turns.push([turnAt, now])
      while (turns.length > 0 && turns[0][1] < now - LOAD_SPAN) turns.shift()
      turnAt = -1
      if (now > end + 10_000) break
    }
    latencies.forEach((list, s) => {
      list.sort((a, b) => a - b)
      results[s].p99 = list.length ? list[Math.min(list.length - 1, Math.floor(0.99 * list.length))] : 0
      results[s].latencies = list
    })
    return results
  }
}

function insert(list: [number, number, number][], item: [number, number, number]): void {
  let i = list.length
  while (i > 0 && list[i - 1][0] > item[0]) i--
  list.splice(i, 0, item)
}
