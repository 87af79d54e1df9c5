// What `require('bulwark')` costs a process (each worker of a cluster pays it again): files loaded, milliseconds
// and resident memory added, each the median of fresh processes, side by side with the peers. The root entry
// loads a component's files when the component is first read, so the table also shows what reading one component
// (BbrLimiter, the usual gateway start) and every export costs; the integrations, the Redis tier and the exporters
// are subpaths (docs/vocabulary.md, "Module layout"). Goal (issue 14): the core at most 10 ms and 4 MB.
import { spawnSync } from 'child_process'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { writeTable } from './harness.mjs'

const dir = path.dirname(fileURLToPath(import.meta.url))
const probe = path.join(dir, 'lib', 'import-probe.cjs')
const ROUNDS = Number(process.env.IMPORT_ROUNDS ?? 7)
const GOAL = { ms: 10, rssMB: 4 }

const cases = [
  { name: "require('bulwark')", specifier: 'bulwark', how: 'require', goal: true },
  { name: "require('bulwark').BbrLimiter", specifier: 'bulwark', how: 'touch:BbrLimiter' },
  { name: "require('bulwark'), every export read", specifier: 'bulwark', how: 'touch:*' },
  { name: "import 'bulwark' (ES module)", specifier: 'bulwark', how: 'import' },
  ...['http', 'express', 'fastify', 'koa', 'grpc', 'undici', 'redis', 'prometheus', 'opentelemetry', 'top'].map(
    (sub) => ({ name: `require('bulwark/${sub}')`, specifier: `bulwark/${sub}`, how: 'require' }),
  ),
  { name: "require('cockatiel')", specifier: 'cockatiel', how: 'require', peer: true },
  { name: "require('rate-limiter-flexible')", specifier: 'rate-limiter-flexible', how: 'require', peer: true },
  { name: "require('opossum')", specifier: 'opossum', how: 'require', peer: true },
]

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function run(c) {
  const samples = []
  for (let i = 0; i < ROUNDS; i++) {
    const r = spawnSync(process.execPath, ['--expose-gc', probe, c.specifier, c.how], { cwd: dir, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${c.name}: ${r.stderr}`)
    samples.push(JSON.parse(r.stdout))
  }
  return {
    files: median(samples.map((s) => s.files)),
    ms: median(samples.map((s) => s.ms)),
    rssMB: median(samples.map((s) => s.rssMB)),
  }
}

// Cases interleaved round by round would share the machine's moments more evenly; one case at a time keeps each
// case's page cache warm the same way for every library, which is what a restarting worker sees.
const results = cases.map((c) => ({ ...c, ...run(c) }))
const cockatiel = results.find((r) => r.specifier === 'cockatiel')
const lines = results.map((r) => [
  r.name,
  String(r.files),
  `${r.ms.toFixed(1)} ms`,
  `${r.rssMB.toFixed(1)} MB`,
  r.goal ? `<= ${GOAL.ms} ms, <= ${GOAL.rssMB} MB: ${r.ms <= GOAL.ms && r.rssMB <= GOAL.rssMB ? 'met' : 'MISSED'}` : '',
  `${(r.ms / cockatiel.ms).toFixed(2)}x / ${(r.rssMB / cockatiel.rssMB).toFixed(2)}x`,
])
writeTable(
  'Import cost: files, time and memory a process pays to load',
  [
    'what is loaded',
    'files',
    `time (median of ${ROUNDS} processes)`,
    'RSS added (median)',
    'goal',
    'x cockatiel (time / RSS)',
  ],
  lines,
)
