#!/usr/bin/env node
'use strict'
// The one list of native sources, shared by binding.gyp (node-gyp), CMakeLists.txt (cmake-js), the C++ harnesses
// (scripts/native-tests.sh) and the cross builds: every .cc file under native/, in a stable order, skipping test
// directories. Adding a file needs no build-file edit.
//
// A file named <stem>_<os>.cc holds one platform's side of an OS difference (native/core/platform/, one header per
// difference and one file per OS, as fs-native-extensions does): it is built only for that platform.
//
// The natives only tests use (windowAdd, CpuReader) are in native/binding/test/: development builds add them
// (gyp variable bulwark_test_natives=1, CMake option BULWARK_TEST_NATIVES), release builds never do.
//
// Usage: node scripts/native-sources.js [--cmake] [--platform linux|darwin|win32] [--dir native/core] [--test-natives]
//   --cmake         ';' between files (a CMake list) instead of ' ' (gyp's <!@(...) expansion)
//   --platform      the target OS (default: this one); gyp's names 'mac' and 'win' are accepted
//   --dir           list only the files under this folder
//   --test-natives  list the test-only natives instead
const fs = require('fs')
const path = require('path')

const root = path.join(__dirname, '..')

const osSuffix = /_(posix|linux|darwin|windows)\.cc$/
const suffixesOf = { linux: ['posix', 'linux'], darwin: ['posix', 'darwin'], win32: ['windows'] }
const aliases = { mac: 'darwin', win: 'win32' }

// Files under `dir` (relative to the package root) that `keep` accepts, skipping test directories.
function collect(dir, keep = (name) => name.endsWith('.cc')) {
  const out = []
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      if (entry.name !== 'test') out.push(...collect(rel, keep))
    } else if (keep(entry.name)) {
      out.push(rel)
    }
  }
  return out.sort()
}

const testNativesDir = 'native/binding/test'

/** The .cc files under `dir` that a build for `platform` compiles. */
function sourcesFor(platform = process.platform, dir = 'native') {
  const target = aliases[platform] ?? platform
  const suffixes = suffixesOf[target]
  if (suffixes === undefined) throw new Error(`bulwark has no native platform layer for '${platform}'`)
  return collect(dir, (name) => {
    if (!name.endsWith('.cc')) return false
    const match = osSuffix.exec(name)
    return match === null || suffixes.includes(match[1])
  })
}

function option(argv, name) {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

const sources = sourcesFor()
if (require.main === module) {
  const argv = process.argv.slice(2)
  const list = argv.includes('--test-natives')
    ? fs
        .readdirSync(path.join(root, testNativesDir))
        .filter((name) => name.endsWith('.cc'))
        .sort()
        .map((name) => `${testNativesDir}/${name}`)
    : sourcesFor(option(argv, '--platform'), option(argv, '--dir'))
  process.stdout.write(list.join(argv.includes('--cmake') ? ';' : ' '))
}
module.exports = { sources, sourcesFor, collect }
