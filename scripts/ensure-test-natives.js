#!/usr/bin/env node
'use strict'
// Run before the tests: they need a development build of the addon, which carries the natives only tests use
// (native/binding/test/: windowAdd, CpuReader, MemoryReader). `npm install` builds a release addon without them, so the first
// `npm test` on a fresh clone rebuilds once with them (npm run build:native). BULWARK_NATIVE (a sanitizer or other
// build chosen on purpose) is left alone.
const { spawnSync } = require('child_process')
const fs = require('fs')
const path = require('path')

const addon = path.join(__dirname, '..', 'build', 'Release', 'bulwark.node')

function hasTestNatives() {
  if (!fs.existsSync(addon)) return false
  // The newest test native: an addon built before it was added lacks it, and is rebuilt.
  const r = spawnSync(process.execPath, ['-p', `typeof require(${JSON.stringify(addon)}).MemoryReader`], {
    encoding: 'utf8',
  })
  return r.stdout.trim() === 'function'
}

if (!process.env.BULWARK_NATIVE && !hasTestNatives()) {
  console.log('bulwark: building the addon with its test-only natives (npm run build:native)')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const r = spawnSync(npm, ['run', 'build:native'], { stdio: 'inherit', shell: process.platform === 'win32' })
  process.exit(r.status ?? 1)
}
