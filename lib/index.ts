// bulwark: overload protection for Node gateways.

// Errors
export { BulwarkError } from './errors/bulwark-error'
export { InvalidOptionError } from './errors/invalid-option-error'
export { InvalidArgumentError } from './errors/invalid-argument-error'
export { NativeLoadError } from './errors/native-load-error'
export { RegionMismatchError } from './errors/region-mismatch-error'
export { RegionCorruptError } from './errors/region-corrupt-error'
export { SharedMemoryError } from './errors/shared-memory-error'

// Signals and clocks
export { cpuUsage, eventLoopUtilization, eventLoopDelay, eventLoopDelayRaw, loadInfo, configureSampler } from './signals/signals'
export type { LoadInfo, SamplerOptions } from './signals/signals'
export { coarseNow, preciseNow } from './signals/clock'
export type { Clock } from './signals/clock'

// Shared state
export { SharedRegion, DEFAULT_MEMBER_CAPACITY } from './shared/shared-region'
export { RegionLayout } from './shared/region-layout'
export type { WindowPlacement, LanePlacement } from './shared/region-layout'
export { RollingWindow } from './shared/rolling-window'
export type { BucketTotals } from './shared/rolling-window'
export { LaneCounter } from './shared/lane-counter'
export { AtomicCounter } from './shared/atomic-counter'
export { listRegions, removeRegion } from './shared/regions'
