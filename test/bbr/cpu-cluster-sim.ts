import type { BbrLimiter } from '../../lib/index'
import type { ManualClock } from '../helpers/manual-clock'

/** One step of the CPU-bound overload scenario (bench/overload/scenarios/cpu-bound.mjs): a load for some time. */
export interface LoadStep {
  /** Offered load, as a multiple of the cluster's capacity. */
  load: number
  seconds: number
}

export interface StepResult {
  offered: number
  shed: number
  /** Admitted requests answered within `sloMs` of their arrival. */
  good: number
  /** Shed requests per 250 ms bin of the step. */
  shedBins: number[]
}

interface Worker {
  limiter: BbrLimiter
  /** Admitted requests waiting for this worker's single CPU: [arrival, token]. */
  queue: [number, number][]
  busyUntil: number
  /** This worker's CPU over the last LOAD_SPAN: 1 per step while busy, and their sum (the load signal). */
  busySteps: Uint8Array
  busy: number
  /** The longest wait for the CPU among requests started in the last delay span (the loop's queueing delay). */
  recentWait: number
}

/** The simulation's time step, ms. */
const STEP = 0.25
/** Load and delay are measured over these spans, as the sampler measures a saturated loop (ms). */
const LOAD_SPAN = 250
const DELAY_SPAN = 50

/**
 * A deterministic model of bench/overload's CPU-bound cluster on a hand-moved clock: `limiters.length` workers,
 * each one event loop whose handler holds its CPU `cpuMs` (requests queue for it, FIFO) and then waits `waitMs`
 * before answering; requests arrive at a constant rate, round-robin, every 10th critical. Each worker's limiter
 * reads its own load (CPU busy share over the last 250 ms, permille) and queueing delay (the longest CPU wait of a
 * request started in the last 50 ms) through `signals`, which the limiters were made with.
 */
export function simulateCpuCluster(
  limiters: BbrLimiter[],
  signals: { load: number; delay: number }[],
  clock: ManualClock,
  steps: LoadStep[],
  { cpuMs = 8, waitMs = 20, sloMs = 500 } = {},
): StepResult[] {
  const capacity = (limiters.length * 1000) / cpuMs
  const workers: Worker[] = limiters.map((limiter) => ({
    limiter,
    queue: [],
    busyUntil: -1,
    busySteps: new Uint8Array(LOAD_SPAN / STEP),
    busy: 0,
    recentWait: 0,
  }))
  const releases: [number, number, number, number][] = [] // [at, worker, token, arrival], in time order
  const results: StepResult[] = []
  let t = clock.time
  let arrivals = 0
  let tick = 0
  let lastDelayAt = t
  for (const step of steps) {
    const result: StepResult = { offered: 0, shed: 0, good: 0, shedBins: [] }
    results.push(result)
    const end = t + step.seconds * 1000
    const gap = 1000 / (step.load * capacity)
    let next = t
    while (t < end) {
      clock.time = t
      // CPUs: a finished handler starts its wait; the next queued request takes the CPU.
      workers.forEach((w, i) => {
        if (w.busyUntil >= 0 && w.busyUntil <= t) {
          w.busyUntil = -1
        }
        if (w.busyUntil < 0 && w.queue.length > 0) {
          const [arrival, token] = w.queue.shift() as [number, number]
          w.recentWait = Math.max(w.recentWait, t - arrival)
          w.busyUntil = t + cpuMs
          insert(releases, [t + cpuMs + waitMs, i, token, arrival])
        }
        const slot = tick % w.busySteps.length
        const now = w.busyUntil >= 0 ? 1 : 0
        w.busy += now - w.busySteps[slot]
        w.busySteps[slot] = now
      })
      while (releases.length > 0 && releases[0][0] <= t) {
        const [at, i, token, arrival] = releases.shift() as [number, number, number, number]
        workers[i].limiter.release(token)
        if (at - arrival <= sloMs) result.good++
      }
      if (t - lastDelayAt >= DELAY_SPAN) lastDelayAt = t
      workers.forEach((w, i) => {
        signals[i].load = (1000 * w.busy) / w.busySteps.length
        const head = w.queue.length > 0 ? t - w.queue[0][0] : 0
        signals[i].delay = Math.max(w.recentWait, head)
        if (lastDelayAt === t) w.recentWait = 0
      })
      while (next <= t && next < end) {
        const w = workers[arrivals % workers.length]
        const critical = arrivals % 10 === 0
        arrivals++
        result.offered++
        const token = w.limiter.tryAcquire(critical ? 'critical' : 'normal')
        const bin = Math.floor((next - (end - step.seconds * 1000)) / 250)
        while (result.shedBins.length <= bin) result.shedBins.push(0)
        if (token < 0) {
          result.shed++
          result.shedBins[bin]++
        } else w.queue.push([next, token])
        next += gap
      }
      t += STEP
      tick++
    }
  }
  return results
}

function insert(list: [number, number, number, number][], item: [number, number, number, number]): void {
  let i = list.length
  while (i > 0 && list[i - 1][0] > item[0]) i--
  list.splice(i, 0, item)
}
