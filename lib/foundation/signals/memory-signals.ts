// Memory as the sampler thread reads it (native/core/memory/cgroup_memory.h, docs/rules/signals.md "Memory"): each
// figure is one load from the signals block, refreshed at every CPU tick (cpuInterval, 500 ms by default).
import type { NativeMemoryInfo } from '../native/native-types'
import { cell, signalCells } from './signal-cells'

const sourceNames = ['host', 'cgroup-v1', 'cgroup-v2'] as const

/**
 * Memory in use in permille of the limit that binds this process: its cgroup's working set (usage less the inactive
 * file pages the kernel reclaims first) against the cgroup's memory limit, or, without a cgroup limit below the
 * host's memory, the host's used memory against its total. 0 until the sampler's first reading.
 */
export function memoryUsage(): number {
  return signalCells[cell.memoryUsage]
}

/** This process's resident set (RSS) in bytes, as the sampler last read it (0 when unknown). */
export function residentMemory(): number {
  return signalCells[cell.resident]
}

/** Where the memory figures come from, and the figures (`loadInfo().memory`). */
export interface MemoryInfo {
  /** Whose figures `used` and `limit` are: the cgroup's when its limit binds, else the host's. */
  source: 'host' | 'cgroup-v1' | 'cgroup-v2'
  /** The process's memory cgroup ('' when it has none); a cgroup without a binding limit leaves `source` 'host'. */
  cgroupPath: string
  /** The file the cgroup's usage is read from, or the host's source. */
  usagePath: string
  /** Why a fallback is in use or a file was ignored; empty when the preferred source works. */
  note: string
  /** Bytes in use against `limit`. */
  used: number
  /** Bytes: the binding limit (0 while unknown). */
  limit: number
  /** used / limit, permille (what memoryUsage() returns). */
  usage: number
  /** This process's resident set, bytes. */
  resident: number
  samples: number
}

/** loadInfo()'s memory part, from the native source description and the signals block. */
export function memoryInfo(native: NativeMemoryInfo | undefined): MemoryInfo {
  return {
    cgroupPath: native?.cgroupPath ?? '',
    usagePath: native?.usagePath ?? '',
    note: native?.note ?? '',
    source: sourceNames[signalCells[cell.memorySource]] ?? 'host',
    used: signalCells[cell.memoryUsed],
    limit: signalCells[cell.memoryLimit],
    usage: signalCells[cell.memoryUsage],
    resident: signalCells[cell.resident],
    samples: signalCells[cell.memorySamples],
  }
}
