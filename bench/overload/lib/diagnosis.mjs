// Where admitted requests wait (DIAG=1): the cluster's workers record, for every request the lean generator stamped
// with its send time, how long it waited before its handler ran (in the kernel's socket queues and behind the loop's
// other work), how long the loop turn had already run when it started, and its time in the handler. This reads
// every worker's records and summarises them per step of a schedule.
import * as http from 'http'
import { fmt, table } from './report.mjs'

/** The host's monotonic clock in ms, as the generator stamps it (bench/lib/lean-load.cjs). */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6

function getFresh(port, pathname) {
  // A new connection each time, so that the cluster hands it to the next worker.
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())))
      })
      .on('error', reject)
  })
}

/** Every worker's answer to `pathname` (asks until it has heard from `workers` distinct workers, at most 16 times). */
export async function collectDiagnosis(port, workers = 2, pathname = '/__diag') {
  const seen = new Map()
  for (let i = 0; i < 16 && seen.size < workers; i++) {
    const r = await getFresh(port, pathname)
    seen.set(r.worker, r)
  }
  return [...seen.values()]
}

const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN

/**
 * Per step ([fromMs, toMs) after `t0`, the run's start on the monotonic clock): requests admitted (200) and shed
 * (503), with the p50/p99 of their wait before the handler, the turn's age when the handler started, and (admitted)
 * their time in the handler.
 */
export function summariseDiagnosis(records, t0, steps) {
  return steps.map(({ label, fromMs, toMs }) => {
    const admitted = { wait: [], turn: [], service: [] }
    const shed = { wait: [], turn: [] }
    for (const r of records) {
      for (let i = 0; i < r.sent.length; i++) {
        const at = r.sent[i] - t0
        if (at < fromMs || at >= toMs) continue
        const into = r.status[i] === 200 ? admitted : r.status[i] === 503 ? shed : undefined
        if (into === undefined) continue
        into.wait.push(r.wait[i])
        into.turn.push(r.turn[i])
        if (into === admitted) admitted.service.push(r.service[i])
      }
    }
    for (const list of [...Object.values(admitted), ...Object.values(shed)]) list.sort((a, b) => a - b)
    const p = (list) => `${fmt(quantile(list, 0.5), 1)} / ${fmt(quantile(list, 0.99), 1)}`
    return [
      label,
      String(admitted.wait.length),
      p(admitted.wait),
      p(admitted.turn),
      p(admitted.service),
      String(shed.wait.length),
      p(shed.wait),
    ]
  })
}

export function diagnosisTable(rows) {
  return table(
    [
      'step',
      'admitted',
      'admitted: wait before handler p50 / p99 ms',
      'turn age at handler p50 / p99 ms',
      'in handler p50 / p99 ms',
      'shed',
      'shed: wait before handler p50 / p99 ms',
    ],
    rows,
  )
}
