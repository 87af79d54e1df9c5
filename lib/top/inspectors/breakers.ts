import {
  BreakerStateCell,
  CLOSED,
  genOf,
  HALF_OPEN,
  OPEN,
  permitsOf,
  placeBreakerState,
  stateOf,
} from '../../breakers/breaker-state'
import { sreStats } from '../../breakers/sre-breaker'
import { type ResolvedWindowOptions, windowLayout } from '../../breakers/window-options'
import { WindowTally } from '../../breakers/window-tally'
import type { Fingerprint } from '../fingerprint'
import type { RegionSnapshot } from '../region-snapshot'
import type { CircuitBreakerView, SreBreakerView } from '../views'

const STATE_NAMES: Record<number, CircuitBreakerView['state']> = {
  [CLOSED]: 'closed',
  [OPEN]: 'open',
  [HALF_OPEN]: 'half-open',
}

function windowOptions(f: Fingerprint, shared: string): ResolvedWindowOptions {
  return {
    window: f.number('window'),
    buckets: f.number('buckets'),
    shared,
    namespace: undefined, // only the layout is wanted: the snapshot is already of the right region
    maxMembers: f.number('lanes'),
    now: () => 0,
  }
}

/** An SreBreaker's region: the window's requests and accepts, and the state and drop probability they give. */
export function inspectSre(snapshot: RegionSnapshot, now: number): SreBreakerView {
  const f = snapshot.fingerprint
  const success = f.number('success')
  const minimumCalls = f.number('minimumCalls')
  const { layout, placement } = windowLayout(
    'sre',
    windowOptions(f, snapshot.sharedName),
    `success=${success} minimumCalls=${minimumCalls}`,
  )
  const tally = new WindowTally(snapshot.region(layout), placement)
  tally.refresh(now)
  const stats = sreStats(tally.sum, tally.count, 1 / success, minimumCalls)
  return { type: 'sre-breaker', ...stats, failureRatio: stats.calls > 0 ? 1 - stats.accepts / stats.calls : 0 }
}

/** A CircuitBreaker's region: the stored state, since when, and the window counted since the breaker last closed. */
export function inspectCircuit(snapshot: RegionSnapshot, now: number): CircuitBreakerView {
  const f = snapshot.fingerprint
  const half = f.number('half')
  const { layout, placement } = windowLayout('circuit', windowOptions(f, snapshot.sharedName), `half=${half}`)
  const statePlacement = placeBreakerState(layout)
  const region = snapshot.region(layout)
  const cell = new BreakerStateCell(region, statePlacement)
  const word = cell.load()
  const tally = new WindowTally(region, placement)
  tally.restartFrom(cell.floor, now)
  const halfOpen = stateOf(word) === HALF_OPEN
  return {
    type: 'circuit-breaker',
    state: STATE_NAMES[stateOf(word)] ?? 'closed',
    stateAge: stateOf(word) === CLOSED && genOf(word) === 0 ? now - snapshot.createdAt : now - cell.since(word, now),
    calls: tally.count,
    badCalls: tally.sum,
    badRatio: tally.count > 0 ? tally.sum / tally.count : 0,
    probesIssued: halfOpen ? permitsOf(word) : 0,
    probesPassed: halfOpen ? cell.passesOf(genOf(word)) : 0,
  }
}
