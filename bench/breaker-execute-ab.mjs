// What each breaker's execute() costs over the `.then` floor plus its own synchronous pair (issue 15's goal), in
// processes of their own that alternate between builds: the peers bench times this among 30 other cases, 15 rounds
// of 20 ms each, where a few ns drown in the machine's noise. Each process warms both breakers (as an application
// holding both would), then times 200 000 awaited calls a round, 12 rounds, and reports the median over rounds of
// `execute - (pair + floor)`, each round's figures taken back to back. CPU time; nothing is written.
//   node bench/breaker-execute-ab.mjs [dist/cjs path ...] [--processes N (4)]
// With two paths (say a build of main and one of a branch), their processes take turns.
import { spawnSync } from 'child_process'
import * as path from 'path'
import { fileURLToPath } from 'url'

const CALLS = 200_000
const ROUNDS = 12
const WARM_ROUNDS = 2

async function child(dist) {
  const { createRequire } = await import('module')
  const { CircuitBreaker, SreBreaker } = createRequire(import.meta.url)(dist)
  const circuit = new CircuitBreaker()
  const sre = new SreBreaker()
  const asyncWork = async () => 1
  const onOk = (v) => v
  const onErr = (e) => {
    throw e
  }
  const cases = {
    // The synchronous pair, then the floor, in one call: each case is awaited alike.
    circuitPair: () => {
      if (circuit.tryAcquire()) circuit.recordSuccess()
      return asyncWork().then(onOk, onErr)
    },
    srePair: () => {
      if (sre.tryAcquire()) sre.recordSuccess()
      return asyncWork().then(onOk, onErr)
    },
    circuit: () => circuit.execute(asyncWork),
    sre: () => sre.execute(asyncWork),
  }
  const rounds = Object.fromEntries(Object.keys(cases).map((k) => [k, []]))
  for (let r = 0; r < WARM_ROUNDS + ROUNDS; r++) {
    for (const [name, fn] of Object.entries(cases)) {
      const start = process.cpuUsage()
      for (let i = 0; i < CALLS; i++) await fn()
      const used = process.cpuUsage(start)
      if (r >= WARM_ROUNDS) rounds[name].push(((used.user + used.system) * 1000) / CALLS)
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  const excess = (name, pair) => median(rounds[name].map((v, i) => v - rounds[pair][i]))
  console.log(JSON.stringify({ circuit: excess('circuit', 'circuitPair'), sre: excess('sre', 'srePair') }))
}

function parent(args) {
  const at = args.indexOf('--processes')
  const processes = at >= 0 ? Number(args[at + 1]) : 4
  const paths = args.filter((a, i) => a !== '--processes' && i !== at + 1)
  const dists = (paths.length > 0 ? paths : ['../dist/cjs']).map((p) =>
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), p),
  )
  const runs = new Map(dists.map((d) => [d, []]))
  for (let i = 0; i < processes; i++) {
    for (const dist of dists) {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', dist], { encoding: 'utf8' })
      if (run.status !== 0) throw new Error(`${dist}: ${run.stderr}`)
      runs.get(dist).push(JSON.parse(run.stdout))
    }
  }
  const ns = (xs) => xs.map((x) => x.toFixed(1)).join(' / ')
  console.log(`execute over floor + its pair, ns, one figure a process (${process.version}):`)
  for (const [dist, r] of runs) {
    console.log(`${dist}`)
    console.log(`  CircuitBreaker  ${ns(r.map((x) => x.circuit))}`)
    console.log(`  SreBreaker      ${ns(r.map((x) => x.sre))}`)
  }
}

if (process.argv[2] === '--child') await child(process.argv[3])
else parent(process.argv.slice(2))
