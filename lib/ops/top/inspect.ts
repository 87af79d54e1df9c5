import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { preciseNow } from '../../foundation/signals/clock'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { inspectBbr } from './inspectors/bbr'
import { inspectCircuit, inspectSre } from './inspectors/breakers'
import { inspectHotKeys } from './inspectors/hot-keys'
import { inspectKeyConcurrency, inspectKeyedLimiter } from './inspectors/keyed-tables'
import { inspectFleet } from './inspectors/fleet'
import { inspectRedisRule, inspectSlidingWindow, inspectTokenBucket } from './inspectors/rate-limiters'
import { inspectBulkhead, inspectRetryBudget } from './inspectors/outbound'
import { inspectSwitches } from './inspectors/switches'
import { inspectRouting } from './inspectors/routing'
import { RegionSnapshot } from './region-snapshot'
import type { ComponentView, RegionReport } from './views'
import type { RegionKind } from '../kinds/component-kinds'

type Inspector = (snapshot: RegionSnapshot, now: number, keys: number) => ComponentView

/** One inspector per kind of region (ops/kinds lists them): each lays the region out again from its fingerprint. */
const INSPECTORS: { readonly [K in RegionKind]: Inspector | undefined } = {
  bbr: inspectBbr,
  sre: inspectSre,
  circuit: inspectCircuit,
  heavykeeper: inspectHotKeys,
  'token-bucket': inspectTokenBucket,
  'sliding-window': inspectSlidingWindow,
  switches: inspectSwitches,
  'key-concurrency-limiter': inspectKeyConcurrency,
  'keyed-limiter': inspectKeyedLimiter,
  'redis-rate-limiter': inspectRedisRule,
  fleet: inspectFleet,
  bulkhead: inspectBulkhead,
  'retry-budget': inspectRetryBudget,
  routing: inspectRouting,
}

export interface InspectOptions {
  /**
   * Regions to read: full region names (`bbr.shop-1a2b3c4d.api`), `shared` names (`api`), `namespace/shared`
   * (`shop-1a2b3c4d/api`) or `kind.shared` (`bbr.api`), `*` matching any characters.
   * Default: every bulwark region of the host.
   */
  names?: readonly string[]
  /** Hot keys listed per top-k (default 10). */
  keys?: number
}

/** Validated options with their defaults. */
export function resolveInspectOptions(options: unknown): { names: readonly string[]; keys: number } {
  const o = checkOptions<InspectOptions>(options, 'options')
  const names = o.names ?? []
  // At most 200 characters, as a region name: a pattern is compiled from each (a megabyte one would not compile).
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n === '' || n.length > 200)) {
    throw new InvalidOptionError('names', names, 'an array of region or shared names (1-200 characters each)')
  }
  return { names, keys: optionalNumber('keys', o.keys, 10, { integer: true, min: 0, max: 10_000 }) }
}

function matcher(names: readonly string[]): (region: string) => boolean {
  if (names.length === 0) return () => true
  const patterns = names.map((n) => new RegExp(`^${n.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`))
  return (region) => {
    const { kind, namespace, shared } = splitRegionName(region)
    const forms = [region, shared, `${namespace}/${shared}`, `${kind}.${shared}`]
    return patterns.some((p) => forms.some((form) => p.test(form)))
  }
}

/**
 * Reads the host's bulwark regions without joining them (`bulwark top`): for each, its members and what its
 * component's stats() would say. A region of an unknown kind or layout is listed with its kind and size; a region
 * that vanishes while being read is left out. Never throws for a region's content.
 */
export function inspectRegions(options?: InspectOptions): RegionReport[] {
  const o = resolveInspectOptions(options)
  const wanted = matcher(o.names)
  const keys = o.keys
  const reports: RegionReport[] = []
  for (const name of listRegions()) {
    if (!wanted(name)) continue
    const report = inspectRegion(name, keys)
    if (report !== undefined) reports.push(report)
  }
  return reports
}

export function inspectRegion(name: string, keys: number): RegionReport | undefined {
  let snapshot: RegionSnapshot
  try {
    snapshot = new RegionSnapshot(name)
  } catch (error) {
    // Gone between the listing and the read (its last member left): not worth a line.
    if (!listRegions().includes(name)) return undefined
    return {
      region: name,
      kind: '?',
      namespace: splitRegionName(name).namespace,
      name: splitRegionName(name).shared,
      bytes: 0,
      liveMembers: 0,
      pids: [],
      members: [],
      status: 'unreadable',
      detail: message(error),
      createdAt: 0,
      generation: 0,
    }
  }
  const live = snapshot.members.filter((m) => m.alive)
  const report: RegionReport = {
    region: name,
    kind: snapshot.kind,
    namespace: snapshot.namespace,
    name: snapshot.sharedName,
    bytes: snapshot.bytes,
    liveMembers: live.length,
    pids: [...new Set(live.map((m) => m.pid))].sort((a, b) => a - b),
    members: snapshot.members.map(({ pid, threadId, alive }) => ({ pid, threadId, alive })),
    status: 'ok',
    createdAt: snapshot.createdAt,
    generation: snapshot.generation,
  }
  const inspector = Object.hasOwn(INSPECTORS, snapshot.kind) ? INSPECTORS[snapshot.kind as RegionKind] : undefined
  if (inspector === undefined) {
    report.status = 'unknown'
    return report
  }
  try {
    report.view = inspector(snapshot, preciseNow(), keys)
  } catch (error) {
    report.status = 'unreadable'
    report.detail = message(error)
  }
  return report
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
