// rate-limiter-flexible's RateLimiterCluster for bench/keyed.bench.mjs: this process is the cluster's primary (its
// RateLimiterClusterMaster keeps every key), one worker decides over IPC, each decision awaited as a request
// handler would. Reports { newKey, known } (ns per decision, median of batches of 200) by IPC.
import cluster from 'cluster'
import { createRequire } from 'module'

const require = createRequire(import.meta.url)
const { RateLimiterClusterMaster, RateLimiterCluster } = require('rate-limiter-flexible')
const keys = Number(process.argv[2] ?? 20000)
const BATCH = 200

if (cluster.isPrimary) {
  new RateLimiterClusterMaster()
  const worker = cluster.fork()
  // The worker's limiter talks to the master on the same channel: only the report has `known`.
  worker.on('message', (result) => {
    if (result?.known === undefined) return
    worker.kill()
    process.send(result, () => process.exit(0))
  })
} else {
  const limiter = new RateLimiterCluster({ keyPrefix: 'bench', points: 100, duration: 2, timeoutMs: 5000 })
  const keyOf = (i) => `c${((i * 2654435761) >>> 0).toString(36)}.${(i % 977).toString(36)}:api/v1`
  const pass = async (order) => {
    const samples = []
    for (let start = 0; start < keys; start += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, j) => Buffer.from(keyOf((order * (start + j)) % keys)).toString())
      const t0 = process.hrtime.bigint()
      for (const key of batch) await limiter.consume(key).catch(() => false)
      samples.push(Number(process.hrtime.bigint() - t0) / BATCH)
    }
    return samples.sort((a, b) => a - b)[samples.length >> 1]
  }
  await limiter.consume('warm-up').catch(() => false)
  const newKey = await pass(1)
  const known = await pass(7919)
  process.send({ newKey, known })
}
