// An open-loop HTTP load generator (constant arrival rate per step, as wrk2 does): request i is sent when it is
// due whether or not earlier ones were answered, and its latency counts from when it was due, so a server that
// falls behind cannot hide it (a closed-loop generator slows down with the server and hides overload).
// Used by the overload benchmark, the `npm start` demo and the end-to-end tests.
'use strict'
const http = require('http')

/**
 * schedule: [{ rate (req/s), seconds }]. Every `criticalEvery`-th request carries `x-priority: critical`. `path` is a
 * string, or a function of the request's index (varying keys, as the `npm start` demo sends).
 * Resolves with typed arrays, one entry per request: due (ms from start), latency (ms; Infinity if unanswered at
 * the deadline), status (0 for a connection error), critical (1/0). With `giveUpMs`, a client gives up on its
 * request that long after it was due (status 0), and tells the server how long it will still wait in the header
 * `x-request-timeout-ms` (and as a Date.now() deadline in `x-request-deadline`); one whose time ran out before a socket was free is never sent.
 */
function runOpenLoop({
  port,
  host = '127.0.0.1',
  path = '/',
  schedule,
  criticalEvery = 10,
  maxSockets = 512,
  drainSeconds = 5,
  giveUpMs = 0,
}) {
  const dues = []
  let t = 0
  for (const step of schedule) {
    const n = Math.round(step.rate * step.seconds)
    for (let i = 0; i < n; i++) dues.push(t + (i * 1000) / step.rate)
    t += step.seconds * 1000
  }
  const total = dues.length
  const due = Float64Array.from(dues)
  const latency = new Float64Array(total).fill(Infinity)
  const status = new Int16Array(total)
  const critical = new Uint8Array(total)
  const agent = new http.Agent({ keepAlive: true, maxSockets })
  const criticalHeaders = { 'x-priority': 'critical' }
  const start = performance.now()
  let next = 0
  let settled = 0

  return new Promise((resolve) => {
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      clearInterval(pump)
      clearTimeout(deadline)
      agent.destroy()
      resolve({ due, latency, status, critical, durationMs: t })
    }
    const send = (i) => {
      const isCritical = criticalEvery > 0 && i % criticalEvery === 0
      critical[i] = isCritical ? 1 : 0
      const target = typeof path === 'function' ? path(i) : path
      const req = http.request(
        { host, port, path: target, agent, headers: isCritical ? criticalHeaders : undefined },
        (res) => {
          res.resume()
          res.on('end', () => {
            latency[i] = performance.now() - start - due[i]
            status[i] = res.statusCode
            if (++settled === total) finish()
          })
        },
      )
      req.on('error', () => {
        latency[i] = performance.now() - start - due[i]
        status[i] = 0
        if (++settled === total) finish()
      })
      if (giveUpMs > 0) {
        const giveUp = setTimeout(() => req.destroy(), start + due[i] + giveUpMs - performance.now())
        req.on('close', () => clearTimeout(giveUp))
        // Sent when the agent hands the request a socket (it may have waited for one), with the time left then.
        req.on('socket', () => {
          const left = Math.floor(start + due[i] + giveUpMs - performance.now())
          if (left <= 0) return req.destroy()
          req.setHeader('x-request-timeout-ms', String(left))
          req.setHeader('x-request-deadline', String(Date.now() + left)) // the same, as a Date.now() deadline
          req.end()
        })
        return
      }
      req.end()
    }
    const pump = setInterval(() => {
      const now = performance.now() - start
      while (next < total && due[next] <= now) send(next++)
    }, 1)
    const deadline = setTimeout(finish, t + drainSeconds * 1000)
  })
}

/**
 * Closed-loop saturation: `concurrency` connections each sending back-to-back for `seconds`. Resolves req/s: the
 * requests answered 200 within the `seconds`. The requests still in flight at the end are awaited (the server is idle
 * after) but not counted: they queued behind each other, so counting their answers over `seconds` added up to
 * `concurrency` requests to the window (64 of about 1 200 in the CPU-bound scenarios, +5 %).
 */
function runClosedLoop({ port, host = '127.0.0.1', path = '/', concurrency = 64, seconds = 5 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const end = performance.now() + seconds * 1000
  let done = 0
  return new Promise((resolve) => {
    let running = concurrency
    const loop = () => {
      if (performance.now() >= end) {
        if (--running === 0) {
          agent.destroy()
          resolve(done / seconds)
        }
        return
      }
      http
        .get({ host, port, path, agent }, (res) => {
          res.resume()
          res.on('end', () => {
            if (res.statusCode === 200 && performance.now() < end) done++
            loop()
          })
        })
        .on('error', loop)
    }
    for (let i = 0; i < concurrency; i++) loop()
  })
}

function quantile(sorted, q) {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/**
 * Summary of the requests due in [fromMs, toMs) (and, with `include`, whose index it accepts). Latency percentiles
 * are over the requests that were not shed: answered 200 (their latency), or never answered / failed (counted as
 * Infinity: they waited forever).
 */
function summarize(run, fromMs, toMs, sloMs = 500, include = undefined) {
  const okLatencies = []
  let admitted = 0
  let offered = 0
  let shed = 0
  let errors = 0
  let unanswered = 0
  let withinSlo = 0
  let criticalSent = 0
  let criticalOk = 0
  for (let i = 0; i < run.due.length; i++) {
    const d = run.due[i]
    if (d < fromMs || d >= toMs || (include !== undefined && !include(i))) continue
    offered++
    const s = run.status[i]
    const ok = s === 200
    if (ok) {
      admitted++
      okLatencies.push(run.latency[i])
      if (run.latency[i] <= sloMs) withinSlo++
    } else if (s === 503 || s === 429) shed++
    else {
      errors++
      if (s === 0) unanswered++
      okLatencies.push(Infinity)
    }
    if (run.critical[i]) {
      criticalSent++
      if (ok && run.latency[i] <= sloMs) criticalOk++
    }
  }
  okLatencies.sort((a, b) => a - b)
  const seconds = (toMs - fromMs) / 1000
  return {
    offeredPerSecond: offered / seconds,
    goodputPerSecond: withinSlo / seconds,
    admittedPerSecond: admitted / seconds,
    shedRate: offered ? shed / offered : 0,
    errorRate: offered ? errors / offered : 0,
    p50: quantile(okLatencies, 0.5),
    p99: quantile(okLatencies, 0.99),
    criticalSuccess: criticalSent ? criticalOk / criticalSent : 1,
    /** Requests never answered (or whose connection failed) by the end of the run. */
    unanswered,
  }
}

/** Per-bin shed fraction and admitted p99 over [fromMs, toMs), for onset and recovery times. */
function timeline(run, fromMs, toMs, binMs = 250, sloMs = 500, include = undefined) {
  const bins = []
  for (let b = fromMs; b < toMs; b += binMs) bins.push(summarize(run, b, b + binMs, sloMs, include))
  return bins
}

module.exports = { runOpenLoop, runClosedLoop, summarize, timeline, quantile }
