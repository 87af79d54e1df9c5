import { gcPausedMs, observeGcPauses, stopGcPauses } from '../../foundation/signals/gc-pauses'
import { memoryUsage, residentMemory } from '../../foundation/signals/memory-signals'
import { preciseNow } from '../../foundation/signals/clock'
import { MEMORY_SIGNALS, type MemorySignal, type ResolvedMemoryOptions } from './memory-options'

/** BbrLimiterStats.memory: the memory signals as the limiter last read them. */
export interface MemoryStats {
  /** Bytes of this thread's V8 heap in use. */
  heapUsed: number
  /** Bytes resident for this process. */
  rss: number
  /** Permille of the binding memory limit in use (`memoryUsage()`). */
  container: number
  /** Permille of the last second spent paused in GC (0 unless `gcPause` is watched). */
  gcPause: number
  /** The first watched signal at or over its threshold at the last check; undefined when none is. */
  over: MemorySignal | undefined
  /** Checks that found a signal at or over its threshold. */
  overChecks: number
}

const HEAP = 0
const GC = 3
/** The signals are read at most this often, ms of the limiter's clock: a heap reading costs about a microsecond. */
const CHECK_EVERY_MS = 100
/** GC pauses are summed over windows of this many ms of real time. */
const GC_WINDOW_MS = 1000

type HeapStatistics = () => { used_heap_size: number }

/**
 * Memory as a load signal of BbrLimiter (docs/rules/bbr.md, "Memory"): whether any watched signal is at or over its
 * threshold. Asked at the limiter's ticks, never per request: the sampler thread's figures are loads, the heap is
 * one V8 call, GC pauses come from a perf_hooks observer that runs only while a limiter watches them.
 */
export class MemoryCheck {
  /** Whether a watched signal was at or over its threshold at the last check. */
  over = false
  private readonly thresholds: ResolvedMemoryOptions
  /** The last readings, in MEMORY_SIGNALS order. */
  private readonly values = new Float64Array(MEMORY_SIGNALS.length)
  private readonly heapStatistics: HeapStatistics
  private overSignal = -1
  private overChecks = 0
  private checkedAt = -Infinity
  private gcWindowStart = 0
  private gcPausedAtStart = 0
  private closed = false

  constructor(thresholds: ResolvedMemoryOptions) {
    this.thresholds = thresholds
    this.heapStatistics = process.getBuiltinModule('v8').getHeapStatistics
    if (this.watches(GC)) {
      observeGcPauses()
      this.gcWindowStart = preciseNow()
      this.gcPausedAtStart = gcPausedMs()
    }
  }

  /** Re-reads the watched signals (at most every CHECK_EVERY_MS of `now`); returns whether one is over. */
  update(now: number): boolean {
    if (now - this.checkedAt < CHECK_EVERY_MS) return this.over
    this.checkedAt = now
    this.read(this.watches(HEAP))
    const thresholds = this.thresholds
    this.overSignal = -1
    for (let i = 0; i < thresholds.length; i++) {
      if (this.values[i] >= thresholds[i]) {
        this.overSignal = i
        break
      }
    }
    this.over = this.overSignal >= 0
    if (this.over) this.overChecks++
    return this.over
  }

  stats(): MemoryStats {
    this.read(true)
    const v = this.values
    return {
      heapUsed: v[HEAP],
      rss: v[1],
      container: v[2],
      gcPause: v[GC],
      over: this.overSignal >= 0 ? MEMORY_SIGNALS[this.overSignal] : undefined,
      overChecks: this.overChecks,
    }
  }

  /** Stops observing GC pauses (when watched). Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.watches(GC)) stopGcPauses()
  }

  private watches(signal: number): boolean {
    return this.thresholds[signal] !== Infinity
  }

  private read(heap: boolean): void {
    const v = this.values
    if (heap) v[HEAP] = this.heapStatistics().used_heap_size
    v[1] = residentMemory()
    v[2] = memoryUsage()
    if (this.watches(GC)) v[GC] = this.gcShare()
  }

  /** Permille of the last completed window spent in GC pauses; a window closes at the first reading after it ends. */
  private gcShare(): number {
    const now = preciseNow()
    const elapsed = now - this.gcWindowStart
    if (elapsed < GC_WINDOW_MS) return this.values[GC]
    const paused = gcPausedMs()
    const share = ((paused - this.gcPausedAtStart) / elapsed) * 1000
    this.gcWindowStart = now
    this.gcPausedAtStart = paused
    return share > 1000 ? 1000 : share
  }
}
