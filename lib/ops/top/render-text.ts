import type { ShadowStats } from '../../foundation/live-rules/shadow-tally'
import { printable, printableTime } from './printable'
import { bytes, count, percent, rate, seconds, textTable } from './text-table'
import type { HostFrame, RegionReport, RulesWatcherView } from './views'

export interface RenderOptions {
  /** Columns to fit (default: unlimited). */
  width?: number
  /** A footer line that tells how to quit (interactive terminals). */
  interactive?: boolean
}

function members(r: RegionReport): string {
  return r.pids.length > 1 ? `${r.liveMembers} (${r.pids.length} pids)` : String(r.liveMembers)
}

function section(title: string, header: string[], rows: string[][], width: number): string[] {
  if (rows.length === 0) return []
  return ['', ...textTable([title, ...header], rows, width)]
}

/** A region's name as shown: `<namespace>/<shared>` (escaped for the terminal with every cell, by textTable). */
function label(r: RegionReport): string {
  return r.namespace === '' ? r.name : `${r.namespace}/${r.name}`
}

/** A component's shadow mode: on or off, and what it would have refused so far, by reason (and class). */
function shadowRow(name: string, shadow: ShadowStats): string[] {
  const refused = shadow.wouldRefuse
    .filter((c) => c.count > 0)
    .map((c) => `${c.priority === undefined ? c.reason : `${c.reason}/${c.priority}`} ${count(c.count)}`)
  return [name, shadow.enabled ? 'shadow' : 'enforcing', refused.join(', ') || '-']
}

/** A host's rules watcher: which process watches, the version obeyed, whether the source answers and how stale. */
function watcherRow(r: RegionReport, v: RulesWatcherView): string[] {
  const watcher = v.watcher === undefined ? 'none' : `pid ${v.watcher.pid} of ${v.followers}`
  const version = `${v.version}${v.canary ? ' (canary)' : ''}${v.fromDisk ? ' (from disk)' : ''}`
  const state = v.sourceUp ? 'up' : v.lastError === undefined ? 'down' : `down: ${printable(v.lastError).slice(0, 60)}`
  const heard = v.staleMs === Infinity ? 'never' : `${seconds(v.staleMs)} ago`
  const last = v.refusals[v.refusals.length - 1]
  const refused = v.refused === 0 || last === undefined ? '0' : `${v.refused}: ${printable(last.reason).slice(0, 60)}`
  return [r.namespace, printable(v.source), watcher, version, state, heard, refused]
}

/** One frame of `bulwark top` as text: a section per kind of component, then the regions it cannot read. */
export function renderFrame(frame: HostFrame, options: RenderOptions = {}): string {
  const width = options.width ?? Infinity
  const rows = {
    limiters: [] as string[][],
    breakers: [] as string[][],
    limits: [] as string[][],
    keys: [] as string[][],
    switches: [] as string[][],
    routing: [] as string[][],
    tables: [] as string[][],
    bulkheads: [] as string[][],
    other: [] as string[][],
    rules: [] as string[][],
    shadow: [] as string[][],
    watchers: [] as string[][],
  }
  for (const r of frame.regions) {
    const v = r.view
    if (v !== undefined && 'rules' in v && v.rules !== undefined) {
      const values = Object.entries(v.rules.values).map(([field, value]) => `${field}=${value}`)
      rows.rules.push([
        label(r),
        v.rules.version === 0 ? '0 (as constructed)' : String(v.rules.version),
        values.join(' '),
      ])
      if (v.rules.shadow !== undefined) rows.shadow.push(shadowRow(label(r), v.rules.shadow))
    }
    if (v === undefined) {
      rows.other.push([
        label(r),
        r.kind,
        members(r),
        bytes(r.bytes),
        r.status === 'unknown' ? 'kind not read by bulwark top' : (r.detail ?? r.status),
      ])
    } else if (v.type === 'limiter') {
      const shed =
        v.rates === undefined
          ? '-'
          : `${rate(v.rates.shed)} (${rate(v.rates.shedInFlight)} + ${rate(v.rates.shedQueueDelay)} + ${rate(v.rates.shedLatency)})`
      rows.limiters.push([
        label(r),
        members(r),
        percent(v.load / 1000),
        `${count(v.inFlight)} / ${count(v.maxInFlight)}`,
        rate(v.rates?.admitted),
        shed,
        `${v.minRt.toFixed(2)} ms`,
        count(v.maxPass),
        count(v.admitted),
        count(v.shed),
      ])
    } else if (v.type === 'sre-breaker') {
      rows.breakers.push([
        label(r),
        'sre',
        members(r),
        v.state,
        percent(v.dropProbability),
        percent(v.failureRatio),
        count(v.calls),
        '',
      ])
    } else if (v.type === 'circuit-breaker') {
      const probes = v.state === 'half-open' ? `probes ${v.probesPassed}/${v.probesIssued} passed` : ''
      rows.breakers.push([
        label(r),
        'circuit',
        members(r),
        `${v.state} ${seconds(v.stateAge)}`,
        '-',
        percent(v.badRatio),
        count(v.calls),
        probes,
      ])
    } else if (v.type === 'token-bucket') {
      rows.limits.push([
        label(r),
        'token bucket',
        members(r),
        `${v.available.toFixed(1)} / ${count(v.burst)}`,
        `refills ${rate(v.rate)}/s`,
      ])
    } else if (v.type === 'sliding-window') {
      rows.limits.push([
        label(r),
        'sliding window',
        members(r),
        `${count(v.available)} / ${count(v.limit)}`,
        `${count(v.used)} used in ${seconds(v.window)}`,
      ])
    } else if (v.type === 'keyed-table') {
      const heavy = v.heaviest.map((k) => `${k.key}${k.truncated ? '…' : ''} ${count(k.refused)}`)
      rows.tables.push([
        label(r),
        v.component,
        members(r),
        `${count(v.size)} / ${count(v.capacity)}`,
        count(v.reused),
        `${count(v.overflow.admitted)} / ${count(v.overflow.refused)}`,
        count(v.refused),
        heavy.join(' · ') || '(none yet)',
      ])
    } else if (v.type === 'redis-rate-limiter') {
      const burst = v.burst === undefined ? '' : ` burst ${count(v.burst)}`
      rows.limits.push([
        label(r),
        `redis ${v.algorithm}`,
        members(r),
        '-',
        `${count(v.limit)} per ${seconds(v.window)}${burst}`,
      ])
    } else if (v.type === 'bulkhead') {
      const limit = v.latency.shedding ? count(v.latency.limit) : 'none'
      const baseRt = `${v.latency.baseRt.toFixed(2)} ms`
      rows.bulkheads.push([
        label(r),
        members(r),
        `${count(v.inFlight)} / ${limit}`,
        baseRt,
        count(v.admitted),
        count(v.shed),
      ])
    } else if (v.type === 'retry-budget') {
      rows.limits.push([
        label(r),
        'retry budget',
        members(r),
        count(v.available),
        `${count(v.retries)} retries / ${count(v.requests)} requests in the window`,
      ])
    } else if (v.type === 'rules-watcher') {
      rows.watchers.push(watcherRow(r, v))
    } else if (v.type === 'routing') {
      const routed = v.groups.map((g) => `${printable(g.group)} ${count(g.routed)}`).join(' · ')
      const rules = `${v.routes.length} rules${v.unreadable ? ' (unreadable: last good kept)' : ''}`
      rows.routing.push([label(r), members(r), String(v.version), rules, routed])
    } else if (v.type === 'switches') {
      for (const sw of v.switches) rows.switches.push([label(r), sw.target, sw.mode, printableTime(sw.since)])
    } else {
      const top = v.keys.map((k) => `${k.key}${k.truncated ? '…' : ''} ${count(k.count)}`).join(' · ')
      rows.keys.push([label(r), members(r), rate(v.rates?.counted), count(v.total), top || '(none yet)'])
    }
  }
  const interval = frame.interval > 0 ? ` · rates over ${frame.interval.toFixed(1)} s` : ''
  const lines = [
    `bulwark top · ${new Date(frame.time).toLocaleTimeString('en-GB')} · ${frame.regions.length} regions${interval}${options.interactive ? ' · q quits' : ''}`,
    // First after the title: during an incident, what an operator forced is the first thing to see.
    ...section(
      'SWITCHES (set by operators; they stay until cleared)',
      ['target', 'mode', 'since'],
      rows.switches,
      width,
    ),
    ...section(
      'RULES SOURCE (one watcher per host follows it)',
      ['source', 'watcher', 'version', 'state', 'heard', 'refused'],
      rows.watchers,
      width,
    ),
    ...section('GRAY ROUTING', ['members', 'version', 'rules', 'routed (host)'], rows.routing, width),
    ...section(
      'LIMITERS',
      [
        'members',
        'load',
        'in flight / max',
        'admitted/s',
        'shed/s (in-flight + delay + latency)',
        'min RT',
        'max pass',
        'admitted',
        'shed',
      ],
      rows.limiters,
      width,
    ),
    ...section('BREAKERS', ['kind', 'members', 'state', 'drop', 'failed', 'requests', ''], rows.breakers, width),
    ...section('RATE LIMITS', ['kind', 'members', 'available', ''], rows.limits, width),
    ...section(
      'KEYED TABLES (one region for every key)',
      ['component', 'members', 'keys / slots', 'reused', 'overflow ok / refused', 'refused', 'refused most (sampled)'],
      rows.tables,
      width,
    ),
    ...section(
      'BULKHEADS (one per upstream)',
      ['members', 'in flight / limit', 'base RT', 'admitted', 'shed'],
      rows.bulkheads,
      width,
    ),
    ...section('HOT KEYS', ['members', 'counted/s', 'counted', 'top keys'], rows.keys, width),
    ...section('RULES', ['version', 'values'], rows.rules, width),
    ...section('SHADOW MODE (would refuse; admitted)', ['mode', 'would have refused'], rows.shadow, width),
    ...section('OTHER REGIONS', ['kind', 'members', 'size', 'note'], rows.other, width),
  ]
  if (frame.regions.length === 0)
    lines.push('', 'No bulwark regions on this host (components use one when given a `shared` name).')
  return lines.join('\n')
}
