// HAProxy and nginx as contenders of the overload scenarios (with --proxies, or PROXIES=1): each in front of the
// scenario's unprotected gateway with its defaults (no limit) and with limits tuned at 1x by Little's law from the
// gateway's measured capacity, and bulwark's gateway behind HAProxy's defaults (a proxy that does not limit, the
// usual deployment). The configs are the templates of bench/overload/proxies/.
import { createRequire } from 'module'
import { ensureProxiesInstalled, proxyVersions, startProxy } from './proxies.mjs'

const require = createRequire(import.meta.url)
const { runClosedLoop } = require('../../lib/open-loop.cjs')

/** Whether this run includes the proxies: `npm run bench:overload -- --proxies <scenario>` or PROXIES=1. */
export const withProxies = () => process.env.PROXIES === '1'

/**
 * The tuned proxies' limits at 1x, from the gateway's capacity (req/s) and its unloaded response time (ms). Little's
 * law: requests in flight = throughput x time in the system, so at capacity the gateway holds capacity x unloaded
 * time; one more absorbs the jitter of a constant-rate load (as the CPU-bound scenario's static limit does). The
 * queue (HAProxy) may hold a request for one unloaded response time; the rate (nginx limit_req) is the capacity,
 * with a burst of the same number of requests.
 */
export function tuningFrom(capacity, unloadedMs) {
  const limit = Math.ceil((capacity * unloadedMs) / 1000) + 1
  return {
    capacity,
    unloadedMs,
    limit,
    criticalLimit: Math.ceil(1.2 * limit),
    queueMs: Math.ceil(unloadedMs),
    rate: Math.round(capacity),
    burst: limit,
  }
}

/**
 * Measures what `port` serves and returns the tuning: the capacity (closed loop, 64 connections, 5 s after 2 s of
 * warm-up) unless given, and the unloaded response time (one connection, one request after another, 3 s).
 */
export async function measureTuning(port, capacity = undefined) {
  if (capacity === undefined) {
    await runClosedLoop({ port, concurrency: 64, seconds: 2 })
    capacity = await runClosedLoop({ port, concurrency: 64, seconds: 5 })
  }
  const oneAtATime = await runClosedLoop({ port, concurrency: 1, seconds: 3 })
  return tuningFrom(capacity, 1000 / oneAtATime)
}

/**
 * The proxy contenders: { id, name, short (for a chart's legend), mode (the gateway's: none | bulwark), proxy: { kind,
 * template }, tuned }.
 * `defaults: false` leaves out the proxies without limits (they collapse under any overload, as `none` does).
 */
export function proxyContenders(t, { defaults = true } = {}) {
  const haproxy = (template) => ({ kind: 'haproxy', template })
  const nginx = (template) => ({ kind: 'nginx', template })
  const all = [
    {
      id: 'haproxy',
      name: 'HAProxy (defaults)',
      short: 'HAProxy',
      mode: 'none',
      proxy: haproxy('haproxy-defaults.cfg'),
    },
    {
      id: 'haproxy-tuned',
      short: 'HAProxy tuned',
      name: `HAProxy maxconn ${t.limit}, queue ${t.queueMs} ms, critical first`,
      mode: 'none',
      proxy: haproxy('haproxy-tuned.cfg'),
      tuned: true,
    },
    { id: 'nginx', name: 'nginx (defaults)', short: 'nginx', mode: 'none', proxy: nginx(undefined) },
    {
      id: 'nginx-limit-conn',
      short: 'nginx limit_conn',
      name: `nginx limit_conn ${t.limit} (critical ${t.criticalLimit})`,
      mode: 'none',
      proxy: nginx('nginx-limit-conn.conf'),
      tuned: true,
    },
    {
      id: 'nginx-limit-req',
      short: 'nginx limit_req',
      name: `nginx limit_req ${t.rate} r/s, burst ${t.burst}`,
      mode: 'none',
      proxy: nginx('nginx-limit-req.conf'),
      tuned: true,
    },
    {
      id: 'bulwark-haproxy',
      name: 'bulwark behind HAProxy (defaults)',
      short: 'bulwark behind HAProxy',
      mode: 'bulwark',
      proxy: haproxy('haproxy-defaults.cfg'),
    },
  ]
  return all.filter((c) => defaults || c.tuned || c.mode === 'bulwark')
}

/** Installs the proxies if missing and names their versions (a line under each table). */
export function prepareProxies() {
  ensureProxiesInstalled()
  return proxyVersions()
}

/** Starts the contender's proxy in front of `gatewayPort` (undefined for a contender without one). */
export function startProxyFor(contender, gatewayPort, t) {
  if (contender.proxy === undefined) return undefined
  const fields = {
    gateway: gatewayPort,
    maxconn: t?.limit,
    queueMs: t?.queueMs,
    limit: t?.limit,
    criticalLimit: t?.criticalLimit,
    rate: t?.rate,
    burst: t?.burst,
  }
  return startProxy(contender.proxy.kind, contender.proxy.template, fields)
}

/**
 * Reads each of `readers` (name to a function that answers CPU ms so far) at `fromMs` and `toMs` from now.
 * result(): per name, the share of one core used between the two reads, in %.
 */
export function watchCpu(readers, fromMs, toMs) {
  const names = Object.keys(readers).filter((name) => readers[name] !== undefined)
  const read = () => Object.fromEntries(names.map((name) => [name, readers[name]()]))
  const at = []
  const timers = [setTimeout(() => (at[0] = read()), fromMs), setTimeout(() => (at[1] = read()), toMs)]
  return {
    result() {
      timers.forEach(clearTimeout)
      if (at.length < 2) return {}
      return Object.fromEntries(names.map((name) => [name, (100 * (at[1][name] - at[0][name])) / (toMs - fromMs)]))
    },
  }
}
