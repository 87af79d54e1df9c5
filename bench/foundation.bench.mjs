// Foundation costs: counters, rolling windows and signal reads, in ns per operation.
import { createRequire } from 'module'
import { do_not_optimize, measure } from './harness.mjs'

const require = createRequire(import.meta.url)
const b = require('../dist/cjs')
// Taken once, as an application would: the package's re-exports are getters.
const { coarseNow, cpuUsage, eventLoopUtilization, preciseNow } = b

const layout = new b.RegionLayout('bench', 8).describe('bench=1')
const atomicCell = layout.cell(0, true)
const lanes = layout.lanes64(1)
const placement = layout.window(100, 100, coarseNow())
const name = `bench-foundation-${process.pid}`
const region = b.SharedRegion.open(name, layout)
const atomic = new b.AtomicCounter(region, atomicCell)
const lane = new b.LaneCounter(region, lanes)
const window = new b.RollingWindow(region, placement)
for (let i = 0; i < 1000; i++) window.record(1, coarseNow() - i * 10)

await measure('Foundation: shared counters, windows and signals', [
  { name: 'LaneCounter.add', fn: () => lane.add(1), target: 15 },
  { name: 'AtomicCounter.add (Atomics.add)', fn: () => atomic.add(1), target: 15 },
  { name: 'RollingWindow.record (coarse clock)', fn: () => window.record(1, coarseNow()), target: 30 },
  { name: 'RollingWindow.total (100 buckets)', fn: () => do_not_optimize(window.total(coarseNow())) },
  { name: 'cpuUsage()', fn: () => do_not_optimize(cpuUsage()), target: 15 },
  { name: 'eventLoopUtilization()', fn: () => do_not_optimize(eventLoopUtilization()), target: 15 },
  { name: 'coarseNow()', fn: () => do_not_optimize(coarseNow()), target: 15 },
  { name: 'preciseNow() (performance.now)', fn: () => do_not_optimize(preciseNow()) },
  { name: 'performance.eventLoopUtilization()', fn: () => do_not_optimize(performance.eventLoopUtilization()) },
])
region.close()
