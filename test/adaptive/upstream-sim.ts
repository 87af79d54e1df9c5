import type { ManualClock } from '../helpers/manual-clock'

/** What the simulation admits through: a BbrLimiter, an AdaptiveBulkhead, anything with tryAcquire/release. */
export interface Admission {
  tryAcquire(priority?: number): number
  release(token: number): void
}

export interface UpstreamPhase {
  /** Offered requests per second (constant arrival rate). */
  rate: number
  seconds: number
  /** Requests the upstream serves at once; the rest wait in its queue (FIFO). */
  concurrency: number
  /** Service time of one request, ms (a function for variable times). */
  serviceMs: number | (() => number)
  /** Class of request i (default: every 10th critical, as the overload benchmark sends). */
  priority?: (i: number) => number
  /** The gateway stops for `ms` (a garbage collection) `at` ms into the phase: what falls in it happens after it. */
  pause?: { at: number; ms: number }
}

export interface PhaseResult {
  offered: number
  admitted: number
  shed: number
  /** Requests the upstream completed during the phase. */
  completed: number
  /** Response times (arrival to completion) of requests admitted in the phase, ms, sorted. */
  latencies: number[]
  shedCritical: number
  /** Per-second series: completions and the most requests in flight seen. */
  perSecond: { completed: number; maxInFlight: number; shed: number }[]
}

interface Running {
  done: number
  token: number
  arrival: number
  phase: number
}

/**
 * A deterministic upstream with a fixed concurrency and a FIFO queue, fed at a constant rate through `admission`
 * on a hand-moved clock: arrivals and completions are played in time order, each at its own time.
 */
export function simulateUpstream(
  admission: Admission,
  clock: ManualClock,
  phases: UpstreamPhase[],
  afterPhase?: (index: number) => void,
): PhaseResult[] {
  const results: PhaseResult[] = phases.map(() => ({
    offered: 0,
    admitted: 0,
    shed: 0,
    completed: 0,
    latencies: [],
    shedCritical: 0,
    perSecond: [],
  }))
  const queue: Running[] = []
  let queueHead = 0
  const running: Running[] = []
  let inFlight = 0
  let t = clock.time
  let phase = 0
  let phaseStart = t
  let index = 0
  const second = () => {
    const r = results[phase]
    const s = Math.floor((clock.time - phaseStart) / 1000)
    while (r.perSecond.length <= s) r.perSecond.push({ completed: 0, maxInFlight: 0, shed: 0 })
    return r.perSecond[s]
  }
  const startWaiting = (now: number) => {
    const p = phases[phase]
    while (running.length < p.concurrency && queueHead < queue.length) {
      const job = queue[queueHead++]
      job.done = now + (typeof p.serviceMs === 'number' ? p.serviceMs : p.serviceMs())
      running.push(job)
    }
    if (queueHead > 4096) {
      queue.splice(0, queueHead)
      queueHead = 0
    }
  }
  for (; phase < phases.length; phase++) {
    const p = phases[phase]
    phaseStart = t
    const end = t + p.seconds * 1000
    const gap = 1000 / p.rate
    const pauseFrom = p.pause === undefined ? Infinity : t + p.pause.at
    const pauseTo = p.pause === undefined ? Infinity : pauseFrom + p.pause.ms
    const seen = (at: number) => (at >= pauseFrom && at < pauseTo ? pauseTo : at)
    let nextArrival = t
    while (true) {
      let first = -1
      for (let i = 0; i < running.length; i++) if (first < 0 || running[i].done < running[first].done) first = i
      const completion = first >= 0 ? running[first].done : Infinity
      if (completion <= nextArrival && completion < end) {
        const job = running.splice(first, 1)[0]
        clock.time = seen(completion)
        admission.release(job.token)
        inFlight--
        results[job.phase].completed++
        results[job.phase].latencies.push(clock.time - job.arrival)
        second().completed++
        startWaiting(completion)
        continue
      }
      if (nextArrival >= end) break
      clock.time = seen(nextArrival)
      const priority = (p.priority ?? ((i: number) => (i % 10 === 0 ? 0 : 2)))(index++)
      const r = results[phase]
      r.offered++
      const token = admission.tryAcquire(priority)
      if (token < 0) {
        r.shed++
        second().shed++
        if (priority === 0) r.shedCritical++
      } else {
        r.admitted++
        inFlight++
        queue.push({ done: 0, token, arrival: nextArrival, phase })
        startWaiting(clock.time)
        const s = second()
        if (inFlight > s.maxInFlight) s.maxInFlight = inFlight
      }
      nextArrival += gap
    }
    t = end
    clock.time = end
    afterPhase?.(phase)
  }
  for (const r of results) r.latencies.sort((a, b) => a - b)
  return results
}

export function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}
