#!/usr/bin/env node
'use strict'
// Finds the Node headers installed on this machine, so that node-gyp, prebuildify and cmake-js build offline
// instead of downloading a header tarball. Prints the include dir with --include, the node dir otherwise.
const fs = require('fs')
const path = require('path')

// A node dir holds include/node/node_api.h: npm_config_nodedir when set, else the prefix of the running node
// (/usr for /usr/bin/node, ~/.nvm/versions/node/vX for nvm).
function nodeDir() {
  const candidates = [process.env.npm_config_nodedir, path.resolve(process.execPath, '..', '..')]
  return candidates.find((dir) => dir && fs.existsSync(path.join(dir, 'include', 'node', 'node_api.h')))
}

function includeDir() {
  const dir = nodeDir()
  return dir && path.join(dir, 'include', 'node')
}

// The environment for a child build: npm_config_nodedir set when this machine has headers and none was chosen.
function buildEnv(env = process.env) {
  const dir = nodeDir()
  return dir && !env.npm_config_nodedir ? { ...env, npm_config_nodedir: dir } : env
}

if (require.main === module) {
  const found = process.argv[2] === '--include' ? includeDir() : nodeDir()
  if (found) process.stdout.write(found)
}
module.exports = { nodeDir, includeDir, buildEnv }
