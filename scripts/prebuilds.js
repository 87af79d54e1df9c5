'use strict'
// The prebuilt binaries the package ships, and whether the ones in prebuilds/ match the native sources.
const fs = require('fs')
const path = require('path')
const { collect } = require('./native-sources')

const root = path.join(__dirname, '..')

/** Platforms whose binaries `npm run prebuild` makes (in CI) and the package carries. */
const shippedTargets = ['linux-x64']

const localTarget = `${process.platform}-${process.arch}`

function prebuildFiles(target = localTarget) {
  const dir = path.join(root, 'prebuilds', target)
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.node'))
    .map((name) => path.join(dir, name))
}

/** Why prebuilds/<target> cannot be packed as it is (missing, or older than a native input), or null. */
function prebuildProblem(target = localTarget) {
  const files = prebuildFiles(target)
  if (files.length === 0) return `no binary in prebuilds/${target}`
  if (target !== localTarget) return null
  const built = Math.min(...files.map((file) => fs.statSync(file).mtimeMs))
  const inputs = [...collect('native', () => true), 'binding.gyp']
  const newer = inputs.find((rel) => fs.statSync(path.join(root, rel)).mtimeMs > built)
  return newer ? `prebuilds/${target} is older than ${newer}` : null
}

module.exports = { shippedTargets, localTarget, prebuildFiles, prebuildProblem }
