import { checkNumber, checkOptions } from '../common/validate'
import { InvalidOptionError } from '../errors/invalid-option-error'
import { native } from '../native/load-native'
import { type MemoryInfo, memoryInfo } from './memory-signals'
import { cell, signalCells } from './signal-cells'

// The sampler's state and settings, apart from the signals components read (signals.ts): a process that only makes
// components does not parse this code (docs/guide/install.md, "Entry points and what loading costs").

const sourceNames = ['host', 'cgroup-v1', 'cgroup-v2'] as const

export interface LoadInfo {
  /** Where CPU usage is read from. */
  source: 'host' | 'cgroup-v1' | 'cgroup-v2'
  /** CPUs this process may use: min(quota / period, cpuset, affinity); may be fractional. */
  cores: number
  quotaCores: number
  cpusetCpus: number
  affinityCpus: number
  cgroupPath: string
  usagePath: string
  /** Why a fallback source is in use; empty when the preferred source works. */
  note: string
  /** The last raw CPU sample, permille. */
  lastSample: number
  /** The smoothed CPU usage, permille (what cpuUsage() returns). */
  cpu: number
  samples: number
  samplerRunning: boolean
  cpuInterval: number
  loopInterval: number
  cpuDecay: number
  loopDecay: number
  /** Where memory figures come from, and the figures (docs/rules/signals.md, "Memory"). */
  memory: MemoryInfo
}

/** Which CPU and memory sources are in use, the effective cores, the memory figures, and the sampler's state. */
export function loadInfo(): LoadInfo {
  const info = native.loadInfo()
  const source = sourceNames[signalCells[cell.source]] ?? info.source
  return {
    ...info,
    source,
    lastSample: signalCells[cell.cpuRaw],
    cpu: signalCells[cell.cpuEma],
    samples: signalCells[cell.cpuSamples],
    samplerRunning: signalCells[cell.running] === 1,
    cpuInterval: signalCells[cell.cpuInterval],
    loopInterval: signalCells[cell.loopInterval],
    cpuDecay: signalCells[cell.cpuDecay],
    loopDecay: signalCells[cell.loopDecay],
    memory: memoryInfo(info.memory),
  }
}

/** The sampler's settings (docs/rules/signals.md); an absent field keeps its current value. */
export interface SamplerOptions {
  /** CPU sampling interval, ms (10 to 60 000). Default 500. */
  cpuInterval?: number
  /** Event-loop sampling interval, ms (5 to 10 000). Default 50. */
  loopInterval?: number
  /** CPU EMA decay per sample: `cpu = cpu * decay + sample * (1 - decay)` (0 to 0.9999). Default 0.95. */
  cpuDecay?: number
  /** Event-loop EMA decay per sample (0 to 0.9999). Default 0.75: a saturated loop reads over 800 within about 400 ms. */
  loopDecay?: number
  /** Read cgroup (and /proc) files below this directory instead of "/" (tests, unusual mounts): CPU and memory. */
  cgroupRoot?: string
}

/** Changes the process-wide sampler. Applies to every thread of the process. */
export function configureSampler(options: SamplerOptions): void {
  const o = checkOptions<SamplerOptions>(options, 'options')
  const next: SamplerOptions = {}
  if (o.cpuInterval !== undefined)
    next.cpuInterval = checkNumber('cpuInterval', o.cpuInterval, { min: 10, max: 60_000 })
  if (o.loopInterval !== undefined)
    next.loopInterval = checkNumber('loopInterval', o.loopInterval, { min: 5, max: 10_000 })
  if (o.cpuDecay !== undefined) next.cpuDecay = checkNumber('cpuDecay', o.cpuDecay, { min: 0, max: 0.9999 })
  if (o.loopDecay !== undefined) next.loopDecay = checkNumber('loopDecay', o.loopDecay, { min: 0, max: 0.9999 })
  if (o.cgroupRoot !== undefined) {
    if (typeof o.cgroupRoot !== 'string' || o.cgroupRoot.length === 0) {
      throw new InvalidOptionError('cgroupRoot', o.cgroupRoot, 'a non-empty directory path')
    }
    next.cgroupRoot = o.cgroupRoot
  }
  native.samplerConfigure(next)
}
