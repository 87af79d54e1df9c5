// HeavyKeeper.add of two builds in one process, beside one exact Map count, on the peers bench's hot-key streams
// (bench/lib/hotkey-pair.mjs): interleaved rounds in CPU time, and each build's ratio taken per round, so that a
// difference of a few % shows through a machine's noise (separate processes of one build differ by 10 % and more).
// Both builds load the same native addon; only their JavaScript differs. It runs in 5 processes (AB_PROCESSES), one
// after another, and gives each one's ratios and their medians: in about one process in five V8 compiles one side's
// add 20-30 % slower (the same build on both sides read B / A 1.22 once in four processes). Nothing is written.
//   node bench/hotkeys-ab.mjs <dist/cjs of build A> <dist/cjs of build B> [zipf s (1.0)] [distinct keys (1000)]
import { spawnSync } from 'child_process'
import * as path from 'path'
import { createRequire } from 'module'
import { fileURLToPath } from 'url'
import { interleaved } from './lib/interleaved.mjs'
import { hotKeyPair } from './lib/hotkey-pair.mjs'

const require = createRequire(import.meta.url)
const child = process.argv[2] === '--child'
const [distA, distB, s = '1.0', distinct = '1000'] = process.argv.slice(child ? 3 : 2)
if (distB === undefined) {
  console.error('usage: hotkeys-ab.mjs <dist/cjs A> <dist/cjs B> [zipf s] [distinct keys]')
  process.exit(2)
}
const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1]
if (!child) {
  const runs = []
  for (let i = 0; i < Number(process.env.AB_PROCESSES ?? 5); i++) {
    const args = [fileURLToPath(import.meta.url), '--child', path.resolve(distA), path.resolve(distB), s, distinct]
    const run = spawnSync(process.execPath, args, { encoding: 'utf8' })
    if (run.status !== 0) throw new Error(run.stderr)
    const r = JSON.parse(run.stdout)
    runs.push(r)
    console.log(
      `A ${r.a.toFixed(1)} ns, B ${r.b.toFixed(1)} ns, Map ${r.map.toFixed(1)} ns; per round: B / A ${r.ba.toFixed(3)}, A / Map ${r.am.toFixed(3)}, B / Map ${r.bm.toFixed(3)}`,
    )
  }
  const of = (key) => median(runs.map((r) => r[key])).toFixed(3)
  console.log(`medians over the processes: B / A ${of('ba')}, A / Map ${of('am')}, B / Map ${of('bm')}`)
  process.exit(0)
}
const A = require(path.resolve(distA)).HeavyKeeper
const B = require(path.resolve(distB)).HeavyKeeper
if (A === B) throw new Error('both paths load the same HeavyKeeper class')
const [a, map] = hotKeyPair(A, Number(s), Number(distinct))
const [b] = hotKeyPair(B, Number(s), Number(distinct))
const results = await interleaved(
  [
    { ...a, name: 'A' },
    { ...b, name: 'B' },
    { ...map, name: 'Map' },
  ],
  { rounds: 21 },
)
const rounds = (name) => results.get(name).rounds
const perRound = (x, y) => median(rounds(x).map((v, i) => v / rounds(y)[i]))
const ns = (name) => results.get(name).ns
const figures = { a: ns('A'), b: ns('B'), map: ns('Map'), ba: perRound('B', 'A'), am: perRound('A', 'Map') }
process.stdout.write(`${JSON.stringify({ ...figures, bm: perRound('B', 'Map') })}\n`)
