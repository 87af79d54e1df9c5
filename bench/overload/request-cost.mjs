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
import { serversDir } from './lib/processes.mjs'
import { measureRequestCost } from './lib/request-cost.mjs'

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
        const r = await measureRequestCost(
          () => start(cluster, { SHARED: `cost-${process.pid}-${Math.random()}`, ...env }),
          {
            rate: RATE,
            seconds: SECONDS,
            loadPath,
          },
        )
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
