// What a run achieved, from the load generator's side: every request's status and latency.
'use strict'
const { quantile } = require('../../bench/lib/open-loop.cjs')

/**
 * Of the requests due from `fromMs` on: goodput (answered 200 within the SLO), latency of the answered requests (a
 * request still unanswered when the run gave up counts with the time it had waited by then, a lower bound), and the
 * share of each kind of answer.
 */
function summarizeRun(run, { fromMs = 0, sloMs, gaveUpAtMs }) {
  const latencies = []
  let ok = 0
  let good = 0
  let refused = 0
  let failed = 0
  let unanswered = 0
  let n = 0
  for (let i = 0; i < run.due.length; i++) {
    if (run.due[i] < fromMs) continue
    n++
    const status = run.status[i]
    const latency = run.latency[i]
    if (latency === Infinity) {
      unanswered++
      latencies.push(gaveUpAtMs - run.due[i])
    } else if (status === 200) {
      ok++
      latencies.push(latency)
      if (latency <= sloMs) good++
    } else if (status === 503 || status === 429) refused++
    else failed++
  }
  latencies.sort((a, b) => a - b)
  const seconds = (run.durationMs - fromMs) / 1000
  const share = (k) => (n === 0 ? 0 : k / n)
  return {
    offeredPerSecond: n / seconds,
    goodputPerSecond: good / seconds,
    okShare: share(ok),
    refusedShare: share(refused),
    failedShare: share(failed),
    unanswered,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  }
}

module.exports = { summarizeRun }
