#!/usr/bin/env node
'use strict'
// The one list of native sources, shared by binding.gyp (node-gyp) and CMakeLists.txt (cmake-js):
// every .cc file under native/, in a stable order. Adding a file needs no build-file edit.
const fs = require('fs')
const path = require('path')

const root = path.join(__dirname, '..')

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

const sources = collect('native')
if (require.main === module) {
  // ';' for CMake lists, ' ' (the default) for gyp's <!@(...) expansion.
  process.stdout.write(sources.join(process.argv[2] === '--cmake' ? ';' : ' '))
}
module.exports = { sources, collect }
