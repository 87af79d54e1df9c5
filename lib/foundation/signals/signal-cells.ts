// This thread's view of the sampler's signals block (native/core/sampler/sampler.h). Reading a signal is one load.
import { native } from '../native/load-native'

const signalsLayout = native.layout.signals
const opened = native.signals()

/** The whole block as doubles. */
export const signalCells = new Float64Array(opened.buffer)

/** Index (in doubles) of this thread's loop slot, or -1 when the addon had no free slot for this thread. */
export const loopCell =
  opened.loopSlot >= 0 ? (signalsLayout.loopSlots + opened.loopSlot * signalsLayout.loopSlotSize) / 8 : -1

export const cell = {
  cpuEma: signalsLayout.cpuEma / 8,
  cpuRaw: signalsLayout.cpuRaw / 8,
  cores: signalsLayout.cores / 8,
  source: signalsLayout.source / 8,
  cpuSamples: signalsLayout.cpuSamples / 8,
  loopTicks: signalsLayout.loopTicks / 8,
  reaped: signalsLayout.reaped / 8,
  running: signalsLayout.running / 8,
  cpuInterval: signalsLayout.cpuInterval / 8,
  loopInterval: signalsLayout.loopInterval / 8,
  cpuDecay: signalsLayout.cpuDecay / 8,
  loopDecay: signalsLayout.loopDecay / 8,
  processNow: signalsLayout.processNow / 8,
  memoryUsage: signalsLayout.memoryUsage / 8,
  memoryUsed: signalsLayout.memoryUsed / 8,
  memoryLimit: signalsLayout.memoryLimit / 8,
  resident: signalsLayout.resident / 8,
  memorySource: signalsLayout.memorySource / 8,
  memorySamples: signalsLayout.memorySamples / 8,
  loopNow: signalsLayout.loopNow / 8,
  loopElu: signalsLayout.loopElu / 8,
  loopDelay: signalsLayout.loopDelay / 8,
  loopDelayRaw: signalsLayout.loopDelayRaw / 8,
  loopEluRaw: signalsLayout.loopEluRaw / 8,
  loopTickAt: signalsLayout.loopTickAt / 8,
  loopDelayMin: signalsLayout.loopDelayMin / 8,
  loopPollAt: signalsLayout.loopPollAt / 8,
} as const
