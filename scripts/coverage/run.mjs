#!/usr/bin/env node
// npm run coverage [-- --raise]: what the tests cover, checked against floors that only rise.
// - TypeScript: V8's coverage of lib/ (@vitest/coverage-v8) over the unit project, less the tests that run no code
//   of lib/ in their own process (vitest.coverage.config.mts says which).
// - native/: gcov (GCC's, Debian's gcc here) over an addon built with --coverage into build-coverage/ (cmake-js),
//   which the same run loads through BULWARK_NATIVE, plus the C++ core harnesses of native/test/ built with
//   --coverage (scripts/native-tests.sh, Linux only).
// Fails when a measure is under its floor in scripts/coverage/floor.json; with --raise, lifts the floors to what
// was measured (never lowers one). Prints each step's duration.
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { fileURLToPath } from 'url'

import { floorFile, raised, readFloor, shortfalls } from './floor.mjs'
import { nativeCoverage } from './native.mjs'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const out = path.join(root, 'build-coverage')
const addon = path.join(out, 'Release', 'bulwark.node')
const harnesses = path.join(out, 'harness')
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function step(title, command, args, env = {}) {
  const start = Date.now()
  console.log(`\n=== coverage: ${title}`)
  const run = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env },
    shell: process.platform === 'win32',
  })
  console.log(`=== coverage: ${title}: ${((Date.now() - start) / 1000).toFixed(0)} s`)
  if (run.status !== 0) process.exit(run.status ?? 1)
}

// -O2 as the release build is close to (cmake-js sets CMAKE_CXX_FLAGS itself: the flags go in the Release ones).
step('the addon with --coverage (cmake-js, build-coverage/)', npx, [
  'cmake-js',
  'compile',
  '--out',
  'build-coverage',
  '--CDCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG --coverage',
  '--CDCMAKE_SHARED_LINKER_FLAGS=--coverage',
])
for (const file of fs.readdirSync(out, { recursive: true })) if (file.endsWith('.gcda')) fs.rmSync(path.join(out, file))

if (process.platform === 'linux') {
  step('the C++ core harnesses with --coverage', 'bash', [path.join('scripts', 'native-tests.sh'), harnesses], {
    NATIVE_TESTS_FLAGS: '-O1 -g --coverage',
    NATIVE_TESTS_LDFLAGS: '--coverage',
  })
}

step('the TypeScript (dist/, which some tests load)', npm, ['run', 'build:ts', '--silent'])
step(
  'the unit project with V8 coverage, on the instrumented addon',
  npx,
  ['vitest', 'run', '--config', 'vitest.coverage.config.mts', '--coverage'],
  { BULWARK_NATIVE: addon },
)

const summary = JSON.parse(fs.readFileSync(path.join(root, 'coverage', 'typescript', 'coverage-summary.json'), 'utf8'))
const native = nativeCoverage(root, [out])
const measured = {
  typescript: Object.fromEntries(
    ['lines', 'statements', 'functions', 'branches'].map((measure) => [measure, summary.total[measure].pct]),
  ),
  native: { lines: native.lines, functions: native.functions },
}
fs.writeFileSync(path.join(root, 'coverage', 'native.json'), JSON.stringify(native, null, 2) + '\n')

const floor = readFloor()
console.log('\n| coverage | measure | measured | floor |\n| --- | --- | --- | --- |')
for (const [language, measures] of Object.entries(measured)) {
  for (const [measure, got] of Object.entries(measures)) {
    console.log(`| ${language} | ${measure} | ${got.toFixed(2)} % | ${floor[language]?.[measure] ?? '-'} % |`)
  }
}
console.log(`(native: ${native.linesRun} of ${native.linesAll} lines; per file in coverage/native.json)`)

if (process.argv.includes('--raise')) {
  fs.writeFileSync(floorFile, JSON.stringify(raised(measured, floor), null, 2) + '\n')
  console.log(`\nFloors raised to what was measured: ${path.relative(root, floorFile)} (commit it).`)
}
const short = shortfalls(measured, readFloor())
if (short.length > 0) {
  console.error(`\nCoverage under its floor:\n  ${short.join('\n  ')}`)
  process.exit(1)
}
