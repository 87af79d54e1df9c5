#!/usr/bin/env node
'use strict'
// Runs a build command (node-gyp, prebuildify, cmake-js) with npm_config_nodedir pointing at this machine's Node
// headers when it has them: without it node-gyp downloads headers, which fails offline.
// Usage: node scripts/with-node-headers.js <command> [args...]
const { spawnSync } = require('child_process')
const { buildEnv } = require('./node-headers')

const [command, ...args] = process.argv.slice(2)
if (!command) {
  console.error('usage: node scripts/with-node-headers.js <command> [args...]')
  process.exit(2)
}
const result = spawnSync(command, args, { stdio: 'inherit', env: buildEnv(), shell: process.platform === 'win32' })
if (result.error) {
  console.error(`${command}: ${result.error.message}`)
  process.exit(1)
}
process.exit(result.status ?? 1)
