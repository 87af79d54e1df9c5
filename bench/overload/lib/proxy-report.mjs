// What the scenarios that run the proxies (upstream, cpu-bound, capacity-change) report about them: a line naming the
// proxies and their limits, the cost of the proxy hop at 0.5x, and bulwark's goals against the best tuned proxy at
// each step. Each scenario's own numbers go into its table; proxies-summary.mjs puts the three side by side.
import { fmt, table } from './report.mjs'

/** The line under a scenario's table: the proxies measured, how their limits were tuned, and where the configs are. */
export function proxiesLine(versions, t, measuredWhat) {
  return (
    `Proxies: HAProxy ${versions.haproxy} and nginx ${versions.nginx}, each with its default threads / workers (one a core) on the same 2 cores, forwarding to the gateway over keep-alive connections; configs in \`bench/overload/proxies/\`. ` +
    `Tuned at 1x from ${measuredWhat}: ${fmt(t.capacity)} req/s and ${fmt(t.unloadedMs, 1)} ms unloaded, so by Little's law ${fmt(t.capacity)} x ${fmt(t.unloadedMs / 1000, 4)} s, rounded up, plus one = ${t.limit} requests in flight. ` +
    `HAProxy: \`maxconn ${t.limit}\` on the gateway's server line, \`timeout queue ${t.queueMs}ms\` (a request waits at most one unloaded response time, then gets a 503), and \`http-request set-priority-class int(-1)\` for critical requests (they leave the queue first). ` +
    `nginx \`limit_conn\`: ${t.limit} normal requests and ${t.criticalLimit} in all (critical may fill 1.2 of the limit, as in bulwark's latency rule), the excess answered 503 at once. ` +
    `nginx \`limit_req\`: \`rate=${t.rate}r/s\`, \`burst=${t.burst} nodelay\`, for every class. Defaults: no limit.`
  )
}

/**
 * The cost of each proxy when nothing is overloaded: its rows at 0.5x against the gateway alone (`none`). Rows carry
 * `cpu` ({ server, proxy } in % of one core over the measured window) and `offeredPerSecond`. CPU per request
 * counts the gateway's and the proxy's processes, not the generator's.
 */
export function hopRows(rows) {
  const base = rows.find((r) => r.id === 'none' && r.load === 0.5)
  const perRequest = (r, key) => (r.cpu?.[key] === undefined ? NaN : (10_000 * r.cpu[key]) / r.offeredPerSecond)
  const total = (r) => perRequest(r, 'server') + (r.cpu?.proxy === undefined ? 0 : perRequest(r, 'proxy'))
  return rows
    .filter((r) => r.load === 0.5 && ['none', 'haproxy', 'nginx', 'bulwark', 'bulwark-haproxy'].includes(r.id))
    .map((r) => ({
      id: r.id,
      contender: r.contender,
      p50: r.p50,
      p99: r.p99,
      addedP50: base ? r.p50 - base.p50 : NaN,
      addedP99: base ? r.p99 - base.p99 : NaN,
      proxyCore: r.cpu?.proxy ?? NaN,
      proxyUs: perRequest(r, 'proxy'),
      serverUs: perRequest(r, 'server'),
      addedUs: base ? total(r) - total(base) : NaN,
    }))
}

export function hopTable(hops) {
  const signed = (n, digits) => (Number.isFinite(n) && n >= 0 ? `+${fmt(n, digits)}` : fmt(n, digits, ''))
  return table(
    [
      'at 0.5x',
      'p50 / p99 ms',
      'added p50 / p99 ms',
      'proxy CPU, % of a core',
      'proxy CPU per request, us',
      'gateway CPU per request, us',
      'added CPU per request, us',
    ],
    hops.map((h) => [
      h.contender,
      `${fmt(h.p50, 1)} / ${fmt(h.p99, 1)}`,
      h.id === 'none' ? '' : `${signed(h.addedP50, 1)} / ${signed(h.addedP99, 1)}`,
      fmt(h.proxyCore, 1, ''),
      fmt(h.proxyUs, 0, ''),
      fmt(h.serverUs, 0, ''),
      h.id === 'none' ? '' : signed(h.addedUs, 0),
    ]),
  )
}

/**
 * Per step, bulwark with its defaults (`bulwarkId`) against the tuned proxy with the most goodput there: goodput at
 * least 95 % of it, critical success at least as high, admitted p99 at most 1.2 times. Returns [{ load, met, failed: [..], bulwark, best }].
 */
export function proxyGoals(rows, bulwarkId) {
  const loads = [...new Set(rows.map((r) => r.load))].sort((a, b) => a - b)
  return loads.flatMap((load) => {
    const bulwark = rows.find((r) => r.id === bulwarkId && r.load === load)
    const tuned = rows.filter((r) => r.tuned && r.load === load)
    if (bulwark === undefined || tuned.length === 0) return []
    const best = tuned.reduce((a, b) => (b.goodput > a.goodput ? b : a))
    const failed = []
    if (bulwark.goodput < 0.95 * best.goodput) failed.push('goodput')
    if (bulwark.criticalSuccess < best.criticalSuccess) failed.push('critical')
    if (!(bulwark.p99 <= 1.2 * best.p99)) failed.push('p99')
    return [{ load, met: failed.length === 0, failed, bulwark: pick(bulwark), best: pick(best) }]
  })
}

const pick = (r) => ({
  contender: r.contender,
  goodput: r.goodput,
  p99: r.p99,
  criticalSuccess: r.criticalSuccess,
})

/** The goals as table lines, one step a row. */
export function proxyGoalsTable(title, goals) {
  return table(
    [title, 'met', 'bulwark / best tuned proxy: goodput/s, critical ok %, admitted p99 ms'],
    goals.map((g) => [
      `${g.load}x, against ${g.best.contender}`,
      g.met ? 'yes' : `NO (${g.failed.join(', ')})`,
      `${fmt(g.bulwark.goodput)} / ${fmt(g.best.goodput)} (${fmt((100 * g.bulwark.goodput) / g.best.goodput)} %); ` +
        `${fmt(100 * g.bulwark.criticalSuccess, 1)} / ${fmt(100 * g.best.criticalSuccess, 1)}; ` +
        `${fmt(g.bulwark.p99, 0, 'timeout')} / ${fmt(g.best.p99, 0, 'timeout')} (${fmt(g.bulwark.p99 / g.best.p99, 2, '-')}x)`,
    ]),
  )
}

/** A row's proxy CPU over its measured window, % of one core (blank without a proxy). */
export const proxyCpuCell = (r) => fmt(r.cpu?.proxy, 0, '')

/**
 * The lines a scenario adds under its table when it ran the proxies: how they were tuned, the hop's cost at 0.5x,
 * and bulwark's goals against the best tuned proxy. Returns { lines, hops, goals }.
 */
export function proxySection({ rows, versions, tuning, measuredWhat, bulwarkId }) {
  const hops = hopRows(rows)
  const goals = proxyGoals(rows, bulwarkId)
  const lines = [
    proxiesLine(versions, tuning, measuredWhat),
    '',
    "What a proxy costs when nothing is overloaded (each contender at 0.5x; CPU over the measured window, from /proc: the proxy's processes, and the gateway's, against the gateway alone; the generator not counted):",
    '',
    ...hopTable(hops),
    '',
    ...proxyGoalsTable('goal: bulwark (defaults) against the best tuned proxy', goals),
    '',
  ]
  return { lines, hops, goals }
}

/** The rows a chart of bulwark beside the proxies draws, with the short names that fit its legend. */
export function proxyChartRows(rows, bulwarkId) {
  return rows
    .filter((r) => r.id === bulwarkId || r.viaProxy)
    .map((r) => ({ ...r, contender: r.id === bulwarkId ? 'bulwark' : r.short }))
}
