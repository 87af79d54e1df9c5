'use strict'
// A Windows addon imports N-API and libuv functions from node.exe, through an import library that node-gyp would
// download with Node (node.lib). Here it is made offline: the N-API exports from the npm package node-api-headers,
// plus the uv_* functions the objects call (listed with binutils' nm, which reads COFF), given to `zig dlltool`.
const { spawnSync } = require('child_process')
const fs = require('fs')
const path = require('path')

const toolchains = require('./toolchains')

function undefinedUvSymbols(objects) {
  const result = spawnSync('nm', ['--undefined-only', '--format=just-symbols', ...objects], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`nm failed: ${result.stderr || result.error}`)
  return [...new Set(result.stdout.split('\n').filter((name) => /^uv_\w+$/.test(name)))].sort()
}

/** Writes node.lib for `objects` into `dir` and returns its path. */
function windowsImportLibrary(zig, objects, dir) {
  const napiDef = path.join(toolchains.install('node-api-headers'), 'def', 'node_api.def')
  const napi = fs.readFileSync(napiDef, 'utf8').trimEnd()
  const def = path.join(dir, 'node.def')
  fs.writeFileSync(def, `${napi}\n${undefinedUvSymbols(objects).join('\n')}\n`)
  const lib = path.join(dir, 'node.lib')
  const result = spawnSync(zig, ['dlltool', '-m', 'i386:x86-64', '-d', def, '-l', lib, '-D', 'node.exe'], {
    stdio: 'inherit',
  })
  if (result.status !== 0) throw new Error('zig dlltool failed')
  return lib
}

module.exports = { windowsImportLibrary }
