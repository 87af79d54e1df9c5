import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkNumber, checkOptions } from '../../foundation/common/validate'

/**
 * Memory as a load signal of BbrLimiter (docs/guide/bbr.md, "Memory"): while any of these is at or over its
 * threshold, the limiter sheds as it does when the load is over `cpuThreshold`. Give at least one.
 */
export interface MemoryOptions {
  /** Bytes of this thread's V8 heap in use (`v8.getHeapStatistics().used_heap_size`). */
  heapUsed?: number
  /** Bytes resident for this process (RSS, as the sampler thread reads it). */
  rss?: number
  /**
   * Permille of the memory limit that binds this process in use (`memoryUsage()`): its cgroup's working set against
   * the cgroup's limit (the one the kernel's OOM killer enforces), else the host's used memory against its total.
   */
  container?: number
  /** Permille of the last second this thread spent paused in garbage collection (ms of pause per second). */
  gcPause?: number
}

/** The memory signals, in the order MemoryStats reports them. */
export type MemorySignal = 'heapUsed' | 'rss' | 'container' | 'gcPause'
export const MEMORY_SIGNALS: readonly MemorySignal[] = ['heapUsed', 'rss', 'container', 'gcPause']

/** Thresholds in MEMORY_SIGNALS order; Infinity for a signal that is not watched. */
export type ResolvedMemoryOptions = Float64Array

const RULES = {
  heapUsed: { above: 0 },
  rss: { above: 0 },
  container: { min: 1, max: 1000 },
  gcPause: { min: 1, max: 1000 },
}

export function resolveMemoryOptions(value: unknown): ResolvedMemoryOptions | undefined {
  if (value === undefined || value === false) return undefined
  const o = checkOptions<MemoryOptions>(value, 'memory')
  for (const key of Object.keys(o)) {
    if (!(MEMORY_SIGNALS as readonly string[]).includes(key)) {
      throw new InvalidOptionError(`memory.${key}`, o[key as MemorySignal], `one of ${MEMORY_SIGNALS.join(', ')}`)
    }
  }
  const thresholds = new Float64Array(
    MEMORY_SIGNALS.map((name) =>
      o[name] === undefined ? Infinity : checkNumber(`memory.${name}`, o[name], RULES[name]),
    ),
  )
  if (thresholds.every((t) => t === Infinity)) {
    throw new InvalidOptionError('memory', value, `an object with at least one of ${MEMORY_SIGNALS.join(', ')}`)
  }
  return thresholds
}
