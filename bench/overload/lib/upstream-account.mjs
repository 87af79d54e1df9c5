// What an upstream (servers/upstream.cjs) did over a window of a run: its stats read when the window opens and
// closes. On a busy machine its timers fire late, so its capacity in that window is measured, not assumed: the
// requests it served per second of busy slot-time, times its slots (concurrency / the service time it achieved).
import { getJson } from './processes.mjs'

/**
 * Starts watching `port` now: reads its stats `fromMs` and `toMs` from now. `result()` resolves
 * { servedPerSecond, utilization (busy share of its slots), capacity (req/s with every slot busy) }.
 */
export function watchUpstream(port, fromMs, toMs) {
  const read = (ms) => new Promise((resolve) => setTimeout(() => resolve(getJson(port, '/__stats')), ms))
  const reads = Promise.all([read(fromMs), read(toMs)])
  return {
    async result() {
      const [a, b] = await reads
      const served = b.served - a.served
      const busy = b.busySlotMs - a.busySlotMs
      const windowMs = toMs - fromMs
      return {
        servedPerSecond: (1000 * served) / windowMs,
        utilization: busy / (b.concurrency * windowMs),
        capacity: busy > 0 ? (1000 * served * b.concurrency) / busy : 0,
      }
    },
  }
}
