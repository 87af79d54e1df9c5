// CPU per request of the ten-x scenario's two fixed costs, which hold whatever else loads the machine (unlike its
// goodput, which needs a quiet one): the lean generator's (bench/lib/lean-load.cjs) and the CPU-bound cluster's
// workers' on a refused request (MODE=static with STATIC_LIMIT=0: every request takes the same shed() as bulwark's
// refusals), and both at 4x against bulwark. CPU time (process.cpuUsage for the generator, /proc for the workers)
// over the requests sent, in us. Nothing is written.
//   node bench/overload/request-cost.mjs [rate req/s (918)] [seconds (6)] [rounds (3)]
// LEAN_LOAD=<path of a lean-load.cjs> and CLUSTER=<path of a cpu-cluster.cjs> measure other builds of them (A/B:
// old and new alternate in the same minutes), BULWARK_DIST as in cpu-cluster.cjs; CASES=<regex> picks the cases.
import { spawn } from 'child_process'
import { createRequire } from 'module'
import * as os from 'os'
import * as path from 'path'
import { sampleCpu } from './lib/cpu-split.mjs'
import { serversDir, stopServer } from './lib/processes.mjs'

const require = createRequire(import.meta.url)
const [RATE = 918, SECONDS = 6, ROUNDS = 3] = process.argv.slice(2).map(Number)
const variants = (name) => (process.env[name] ?? '').split(',').filter(Boolean)
const LOADS = variants('LEAN_LOAD').length ? variants('LEAN_LOAD') : [require.resolve('../lib/lean-load.cjs')]
const CLUSTERS = variants('CLUSTER').length ? variants('CLUSTER') : [path.join(serversDir, 'cpu-cluster.cjs')]

function start(cluster, env) {
  const child = spawn(process.execPath, [cluster], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve) => child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) })))
}

async function measure(loadPath, cluster, env) {
  const { runLeanLoad } = require(loadPath)
  const { child, port } = await start(cluster, { SHARED: `cost-${process.pid}-${Math.random()}`, ...env })
  // 1 s of warm-up (JIT, sockets), then the measured run.
  await runLeanLoad({ port, schedule: [{ rate: RATE, seconds: 1 }], drainSeconds: 1 })
  const a = sampleCpu(child.pid)
  const run = await runLeanLoad({ port, schedule: [{ rate: RATE, seconds: SECONDS }], drainSeconds: 1 })
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

// The ten-x scenario's handler (cpu-bound.mjs's startCluster): 8 ms of CPU, then 20 ms of waiting.
const HANDLER = { CPU_MS: '8', WAIT_MS: '20' }
const cases = [
  ['all shed', { ...HANDLER, MODE: 'static', STATIC_LIMIT: '0' }],
  ['bulwark', { ...HANDLER, MODE: 'bulwark' }],
].filter(([name]) => !process.env.CASES || new RegExp(process.env.CASES).test(name))
console.log(
  `${RATE} req/s for ${SECONDS} s, load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
)
for (let round = 0; round < ROUNDS; round++)
  for (const [name, env] of cases)
    for (const loadPath of LOADS)
      for (const cluster of CLUSTERS) {
        const r = await measure(loadPath, cluster, env)
        console.log(
          `${name.padEnd(9)} gen ${r.generator.toFixed(1).padStart(6)} us  workers ${r.workers.toFixed(0).padStart(5)} us/req  ok ${(100 * r.ok).toFixed(1)} %  sockets ${r.sockets}  [${path.relative(process.cwd(), loadPath)} | ${path.relative(process.cwd(), cluster)}]`,
        )
      }
console.log(
  `load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
)
