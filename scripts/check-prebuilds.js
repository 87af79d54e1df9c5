#!/usr/bin/env node
'use strict'
// Run before `npm publish`: the package must carry a current, checked binary for every target it promises, since
// users without a compiler depend on them. `npm run prebuild:all` (CI, the release workflow) makes them; packing
// does not.
const path = require('path')
const { targets, prebuildProblem } = require('./prebuilds')
const { checkBinary } = require('./prebuild/check-binaries')
const { prebuildPath } = require('./prebuild/targets')

const root = path.join(__dirname, '..')
const stale = prebuildProblem(targets)
const problems = stale ? [stale] : targets.flatMap((t) => checkBinary(t, path.join(root, prebuildPath(t))))
if (problems.length > 0) {
  console.error(`bulwark: not publishing: ${problems.join('; ')}. Run npm run prebuild:all (CI does) first.`)
  process.exit(1)
}
