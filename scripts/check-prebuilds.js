#!/usr/bin/env node
'use strict'
// Run before `npm publish`: the package must carry a current binary for every platform it promises, since users
// without a compiler depend on it. Prebuilds come from `npm run prebuild` in CI; packing does not make them.
const { shippedTargets, prebuildProblem } = require('./prebuilds')

const problems = shippedTargets.map((target) => prebuildProblem(target)).filter(Boolean)
if (problems.length > 0) {
  console.error(`bulwark: not publishing: ${problems.join('; ')}. Run npm run prebuild (CI does) first.`)
  process.exit(1)
}
