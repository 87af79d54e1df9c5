#!/usr/bin/env node
'use strict'
// Builds prebuilt binaries into prebuilds/<platform>-<arch>/ with Zig, checks each (check-binaries.js) and prints
// how long each took. `npm run prebuild` builds this machine's target, `npm run prebuild:all` every target.
// Usage: node scripts/prebuild/build.js [--all | --target <id> ...]
const { spawnSync } = require('child_process')
const path = require('path')

const { checkBinary, describeBinary } = require('./check-binaries')
const { compileTarget } = require('./compile')
const { targets, prebuildPath, findTarget } = require('./targets')

const root = path.join(__dirname, '..', '..')

function hostTargets() {
  const report = process.report?.getReport()
  const libc = process.platform !== 'linux' ? null : report?.header?.glibcVersionRuntime ? 'glibc' : 'musl'
  const sameLibc = (t) => libc === null || (libc === 'musl') === Boolean(t.musl)
  return targets.filter((t) => t.platform === process.platform && t.arch === process.arch && sameLibc(t))
}

function chosenTargets(args) {
  if (args.includes('--all')) return targets
  const ids = args.flatMap((arg, i) => (args[i - 1] === '--target' ? [arg] : []))
  if (ids.length > 0) return ids.map(findTarget)
  const host = hostTargets()
  if (host.length === 0) throw new Error(`no prebuild target for ${process.platform}-${process.arch}`)
  return host
}

// npm runs a script named pre<name> before <name>, so `npm run build:all` would start `prebuild:all` (every
// platform) first. Only `npm run prebuild:all` itself builds: the npm process that started this one (through
// `sh -c`) names the script it was asked for.
function startedBeforeBuildAll() {
  if (process.env.npm_lifecycle_event !== 'prebuild:all' || process.platform === 'win32') return false
  const ps = (field, pid) => spawnSync('ps', ['-o', `${field}=`, '-p', String(pid)], { encoding: 'utf8' }).stdout.trim()
  const npmArgs = ps('args', ps('ppid', process.ppid))
  return /\bbuild:all\b/.test(npmArgs) && !/\bprebuild:all\b/.test(npmArgs)
}

function seconds(since) {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`
}

async function main() {
  if (startedBeforeBuildAll()) return
  const chosen = chosenTargets(process.argv.slice(2))
  const started = Date.now()
  const failures = []
  for (const target of chosen) {
    const begun = Date.now()
    const file = path.join(root, prebuildPath(target))
    let problems
    try {
      await compileTarget(target, { outDir: path.dirname(file) })
      problems = checkBinary(target, file)
      console.log(`${describeBinary(target, file)} (built in ${seconds(begun)})`)
    } catch (error) {
      problems = [`${target.id}: ${error.message}`]
    }
    if (problems.length === 0) continue
    failures.push(...problems)
    console.error(`${target.id}: FAILED after ${seconds(begun)}`)
  }
  const built = chosen.length - new Set(failures.map((p) => p.split(':')[0])).size
  console.log(`prebuild: ${built} of ${chosen.length} target(s) built and checked in ${seconds(started)}`)
  if (failures.length > 0) {
    console.error(`prebuild failed:\n${failures.join('\n')}`)
    process.exit(1)
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
