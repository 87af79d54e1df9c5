// CPU per request of a cluster under the lean generator (bench/lib/lean-load.cjs), measured: a second of warm-up (JIT,
// sockets), then `seconds` at `rate` req/s; the generator's CPU time (process.cpuUsage) and the workers' (/proc)
// over the requests sent, in us. bench/overload/request-cost.mjs and the ten-x scenario (a refusal's cost) use it.
import { createRequire } from 'module'
import { sampleCpu } from './cpu-split.mjs'
import { stopServer } from './processes.mjs'

const require = createRequire(import.meta.url)

/**
 * `start()` starts the cluster and resolves to { child, port }; `loadPath` is the lean generator to drive it with.
 * Returns { generator, workers } in us per request, `ok` (the share answered 200) and the sockets the generator
 * opened.
 */
export async function measureRequestCost(
  start,
  { rate, seconds, loadPath = require.resolve('../../lib/lean-load.cjs') },
) {
  const { runLeanLoad } = require(loadPath)
  const { child, port } = await start()
  await runLeanLoad({ port, schedule: [{ rate, seconds: 1 }], drainSeconds: 1 })
  const a = sampleCpu(child.pid)
  const run = await runLeanLoad({ port, schedule: [{ rate, seconds }], drainSeconds: 1 })
  const b = sampleCpu(child.pid)
  await stopServer(child)
  const n = run.due.length
  const ok = run.status.filter((s) => s === 200).length
  const us = (ms) => (1000 * ms) / n
  return {
    generator: us(b.generator - a.generator),
    workers: us(b.workers.reduce((x, y) => x + y, 0) - a.workers.reduce((x, y) => x + y, 0)),
    ok: ok / n,
    sockets: run.generator.socketsOpened,
  }
}
