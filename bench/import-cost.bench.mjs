// What loading bulwark costs a process (each worker of a cluster pays it again): files loaded and the JavaScript in
// them, milliseconds (wall, and CPU time of the process, which other work on the machine inflates less), resident
// memory added and, of that, the private memory (RSS also counts pages of node's own binary that every node process
// shares), each the median of fresh processes, side by side with the peers. Each entry is a bundle that loads its
// code and the chunks it shares with the others (scripts/build-ts.mjs): 'bulwark/core' holds the components a gateway
// starts with, the root the rest of the core; the integrations, the Redis tier, the exporters and the host view are
// subpaths (docs/vocabulary.md, "Module layout"). Goal (issue 36): the core used costs no more than cockatiel used;
// issue 14's goal for loading alone (10 ms and 4 MB) is shown on the rows marked.
import { execFileSync, spawnSync } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { writeTable } from './harness.mjs'

const dir = path.dirname(fileURLToPath(import.meta.url))
const probe = path.join(dir, 'lib', 'import-probe.cjs')
const ROUNDS = Number(process.env.IMPORT_ROUNDS ?? 7)
const GOAL = { ms: 10, rssMB: 4 }
// The addon file bulwark loads here, as a process that loaded bulwark reports it.
const addonFile = JSON.parse(
  execFileSync(
    process.execPath,
    [
      '-p',
      "require('bulwark'); JSON.stringify(process.report.getReport().sharedObjects.find((f) => f.endsWith('.node')))",
    ],
    { cwd: dir, encoding: 'utf8' },
  ),
)
// Node's on-disk compile cache (NODE_COMPILE_CACHE, Node 22.1 and later): an operator's setting, never the library's.
const [major, minor] = process.versions.node.split('.').map(Number)
const compileCache = major > 22 || (major === 22 && minor >= 1)

// 'use:core' and 'import:use' make one BbrLimiter, CircuitBreaker, SreBreaker and TokenBucket and ask each once.
const cases = [
  { name: "require('bulwark')", specifier: 'bulwark', how: 'require', goal: true },
  { name: "require('bulwark'), one BbrLimiter used", specifier: 'bulwark', how: 'use:bbr' },
  { name: "require('bulwark'), core components used", specifier: 'bulwark', how: 'use:core' },
  { name: "require('bulwark/core')", specifier: 'bulwark/core', how: 'require', goal: true },
  { name: "require('bulwark/core'), core components used", specifier: 'bulwark/core', how: 'use:core' },
  // Where the time of the rows above goes (docs/guide/install.md has the whole breakdown, in instructions): what
  // Node 20 and 22 pay to resolve the first package of a process that has an exports map (Node 24 and later load
  // that resolver at start), and the addon alone (loading the file and its module init; no sampler).
  {
    name: "resolving the package alone (exports map): require('bulwark/package.json')",
    specifier: 'bulwark/package.json',
  },
  ...(addonFile ? [{ name: 'the addon alone: require(bulwark.node)', specifier: addonFile, how: 'require' }] : []),
  // Every process after the first reuses the code the first compiled (a warm cache: one unmeasured run fills it).
  {
    name: "require('bulwark'), core components used, NODE_COMPILE_CACHE warm",
    specifier: 'bulwark',
    how: 'use:core',
    compileCache: true,
  },
  // An ES module entry exports its CommonJS bundle's values (scripts/build-ts.mjs). Beside it, what Node itself
  // takes to import a package whose ES module entry is one line (a package with an exports map, like bulwark).
  { name: "import from 'bulwark/core'", specifier: 'bulwark/core', how: 'import', goal: true },
  { name: 'import of a one-line ES module package (Node alone)', specifier: 'one-line', how: 'import', floor: true },
  {
    name: "import from 'bulwark/core', core components used",
    specifier: 'bulwark/core',
    how: 'import:use',
  },
  { name: "import from 'bulwark' (ES module)", specifier: 'bulwark', how: 'import' },
  { name: "import from 'bulwark', core components used", specifier: 'bulwark', how: 'import:use' },
  ...[
    'http',
    'express',
    'fastify',
    'koa',
    'grpc',
    'undici',
    'redis',
    'prometheus',
    'opentelemetry',
    'top',
    'fleet',
  ].map((sub) => ({ name: `require('bulwark/${sub}')`, specifier: `bulwark/${sub}`, how: 'require' })),
  { name: "require('cockatiel')", specifier: 'cockatiel', how: 'require', peer: true },
  { name: "require('rate-limiter-flexible')", specifier: 'rate-limiter-flexible', how: 'require', peer: true },
  { name: "require('opossum')", specifier: 'opossum', how: 'require', peer: true },
  // Using a library compiles the code that runs, whichever library it is: the peers' components made and used once,
  // beside bulwark's 'core components used' rows (import-probe.cjs, usePeer, says what each does).
  { name: "require('cockatiel'), a bulkhead and a breaker used", specifier: 'cockatiel', how: 'use:peer', peer: true },
  {
    name: "require('rate-limiter-flexible'), a memory limiter used",
    specifier: 'rate-limiter-flexible',
    how: 'use:peer',
    peer: true,
  },
  { name: "require('opossum'), a breaker used", specifier: 'opossum', how: 'use:peer', peer: true },
]

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

// The one-line package, in a directory of its own with a copy of the probe (which resolves from where it is).
const floorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-import-floor-'))
const floorPackage = path.join(floorDir, 'node_modules', 'one-line')
fs.mkdirSync(floorPackage, { recursive: true })
fs.writeFileSync(
  path.join(floorPackage, 'package.json'),
  JSON.stringify({ name: 'one-line', exports: { '.': { import: './index.mjs', require: './index.cjs' } } }),
)
fs.writeFileSync(path.join(floorPackage, 'index.mjs'), 'export const one = 1\n')
fs.writeFileSync(path.join(floorPackage, 'index.cjs'), 'exports.one = 1\n')
fs.copyFileSync(probe, path.join(floorDir, 'import-probe.cjs'))
process.on('exit', () => fs.rmSync(floorDir, { recursive: true, force: true }))

function spawnProbe(c, env) {
  const where = c.floor ? floorDir : dir
  const probeFile = c.floor ? path.join(floorDir, 'import-probe.cjs') : probe
  const r = spawnSync(process.execPath, ['--expose-gc', probeFile, c.specifier, c.how ?? 'require'], {
    cwd: where,
    encoding: 'utf8',
    env,
  })
  if (r.status !== 0) throw new Error(`${c.name}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

function run(c) {
  if (c.compileCache && !compileCache) return { skipped: `n/a: Node ${process.versions.node} has no compile cache` }
  const cacheDir = c.compileCache ? fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-compile-cache-')) : undefined
  const env = cacheDir ? { ...process.env, NODE_COMPILE_CACHE: cacheDir } : process.env
  if (cacheDir) spawnProbe(c, env)
  const samples = []
  for (let i = 0; i < ROUNDS; i++) samples.push(spawnProbe(c, env))
  if (cacheDir) fs.rmSync(cacheDir, { recursive: true, force: true })
  const privateMB = samples.map((s) => s.privateMB)
  return {
    files: median(samples.map((s) => s.files)),
    jsKB: median(samples.map((s) => s.jsKB)),
    ms: median(samples.map((s) => s.ms)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    rssMB: median(samples.map((s) => s.rssMB)),
    privateMB: privateMB.includes(null) ? null : median(privateMB),
  }
}

// Cases interleaved round by round would share the machine's moments more evenly; one case at a time keeps each
// case's page cache warm the same way for every library, which is what a restarting worker sees.
const loadBefore = os.loadavg()[0]
const results = cases.map((c) => ({ ...c, ...run(c) }))
// Times on a machine that other work keeps busy are not the library's: say so next to them.
const load = Math.max(loadBefore, os.loadavg()[0])
const busy = load > os.cpus().length / 2
const note = `Load average ${load.toFixed(1)} on ${os.cpus().length} cores while measuring: ${
  busy ? 'BUSY, times are inflated by other work, CPU time less than wall time (files and memory are not)' : 'quiet'
}.`
const cockatiel = results.find((r) => r.specifier === 'cockatiel')
const lines = results.map((r) => (r.skipped ? [r.name, r.skipped, '', '', '', '', '', ''] : row(r)))
function row(r) {
  return [
    r.name,
    `${r.files} (${Math.round(r.jsKB)} KB)`,
    `${r.ms.toFixed(1)} ms`,
    `${r.cpuMs.toFixed(1)} ms`,
    `${r.rssMB.toFixed(1)} MB`,
    r.privateMB === null ? 'n/a' : `${r.privateMB.toFixed(1)} MB`,
    r.goal
      ? `<= ${GOAL.ms} ms, <= ${GOAL.rssMB} MB: ${r.ms <= GOAL.ms && r.rssMB <= GOAL.rssMB ? 'met' : 'MISSED'}`
      : '',
    `${(r.ms / cockatiel.ms).toFixed(2)}x / ${(r.rssMB / cockatiel.rssMB).toFixed(2)}x`,
  ]
}
writeTable(
  'Import cost: files, time and memory a process pays to load',
  [
    'what is loaded',
    'files (JS parsed)',
    `time (median of ${ROUNDS} processes)`,
    'CPU time (median)',
    'RSS added (median)',
    'of which private',
    'goal',
    'x cockatiel (time / RSS)',
  ],
  lines,
  { note },
)
