// Time this thread's event loop spent paused in garbage collection, from perf_hooks' 'gc' entries. The observer runs
// only while some limiter asks for it (each GC then costs a PerformanceEntry), and perf_hooks is loaded then, not at
// start-up (lib/foundation/signals/clock.ts says what loading it costs).
import type { PerformanceObserver } from 'perf_hooks'

let observer: PerformanceObserver | undefined
let users = 0
let pausedMs = 0

/** Milliseconds this thread has spent in GC pauses while observed (only differences between readings mean anything). */
export function gcPausedMs(): number {
  return pausedMs
}

/** Starts observing this thread's GC pauses (counted: each call needs one stopGcPauses). */
export function observeGcPauses(): void {
  if (users++ > 0) return
  const perf = process.getBuiltinModule('perf_hooks')
  observer = new perf.PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pausedMs += entry.duration
  })
  observer.observe({ type: 'gc' })
}

/** Ends one observeGcPauses(); the last one disconnects the observer. */
export function stopGcPauses(): void {
  if (users === 0 || --users > 0) return
  observer?.disconnect()
  observer = undefined
}
