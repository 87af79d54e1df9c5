import { preciseNow } from '../../foundation/signals/clock'
import { checkFunction } from '../../foundation/common/validate'
import { type InspectOptions, inspectRegions, resolveInspectOptions } from './inspect'
import type { ComponentView, HostFrame, RegionReport } from './views'

interface Previous {
  at: number
  view: ComponentView
}

/** Per-second change of a counter; one that went down (a fading halves the hot-key total) counts as no change. */
function perSecond(now: number, before: number, seconds: number): number {
  return Math.max(0, now - before) / seconds
}

/**
 * Samples the host's regions again and again (`bulwark top`, the `npm start` demo): each frame carries, besides the
 * counters, their rates per second since the previous frame. A region created again in between starts over.
 */
export class HostWatcher {
  private readonly options: InspectOptions
  private readonly clock: () => number
  private previous = new Map<string, Previous>()
  private lastAt: number | undefined

  constructor(options?: InspectOptions, clock: () => number = preciseNow) {
    this.options = resolveInspectOptions(options)
    this.clock = checkFunction<() => number>('clock', clock)
  }

  sample(): HostFrame {
    const at = this.clock()
    const regions = inspectRegions(this.options)
    const next = new Map<string, Previous>()
    for (const report of regions) {
      if (report.view === undefined) continue
      const key = `${report.region}#${report.createdAt}`
      const before = this.previous.get(key)
      if (before !== undefined && at > before.at) addRates(report, before, (at - before.at) / 1000)
      next.set(key, { at, view: report.view })
    }
    const interval = this.lastAt === undefined ? 0 : (at - this.lastAt) / 1000
    this.previous = next
    this.lastAt = at
    return { time: new Date().toISOString(), interval, regions }
  }

  /**
   * Forgets the previous frame (the next sample has no rates). A watcher joins no region (each sample reads copies
   * of them), so this is all there is to close; sample() may still be called.
   */
  close(): void {
    this.previous = new Map()
    this.lastAt = undefined
  }

  [Symbol.dispose](): void {
    this.close()
  }
}

function addRates(report: RegionReport, before: Previous, seconds: number): void {
  const view = report.view
  if (view?.type === 'limiter' && before.view.type === 'limiter') {
    const shedInFlight = perSecond(view.shedInFlight, before.view.shedInFlight, seconds)
    const shedQueueDelay = perSecond(view.shedQueueDelay, before.view.shedQueueDelay, seconds)
    const shedLatency = perSecond(view.shedLatency, before.view.shedLatency, seconds)
    view.rates = {
      admitted: perSecond(view.admitted, before.view.admitted, seconds),
      shed: shedInFlight + shedQueueDelay + shedLatency,
      shedInFlight,
      shedQueueDelay,
      shedLatency,
    }
  } else if (view?.type === 'hot-keys' && before.view.type === 'hot-keys') {
    view.rates = { counted: perSecond(view.total, before.view.total, seconds) }
  }
}
