'use strict'
// The prebuilt binaries the package ships (scripts/prebuild/targets.js) and whether those in prebuilds/ are
// current: present, and newer than every native input.
const fs = require('fs')
const path = require('path')
const { collect } = require('./native-sources')
const { targets, prebuildPath } = require('./prebuild/targets')

const root = path.join(__dirname, '..')

/** prebuilds/<platform>-<arch> of this machine: the folder node-gyp-build searches here. */
const localTarget = `${process.platform}-${process.arch}`

function isMusl() {
  return process.platform === 'linux' && !process.report?.getReport()?.header?.glibcVersionRuntime
}

/** The targets whose binaries this machine loads (one: its platform, architecture and C library). */
const localTargets = targets.filter(
  (t) => `${t.platform}-${t.arch}` === localTarget && (t.platform !== 'linux' || Boolean(t.musl) === isMusl()),
)

/** Why the binaries of `chosen` cannot be packed as they are (missing, or older than a native input), or null. */
function prebuildProblem(chosen = localTargets) {
  if (chosen.length === 0) return `no prebuild target for ${localTarget}`
  const missing = chosen.filter((t) => !fs.existsSync(path.join(root, prebuildPath(t))))
  if (missing.length > 0) return `missing ${missing.map(prebuildPath).join(', ')}`
  const built = Math.min(...chosen.map((t) => fs.statSync(path.join(root, prebuildPath(t))).mtimeMs))
  const inputs = [...collect('native', () => true), 'binding.gyp']
  const newer = inputs.find((rel) => fs.statSync(path.join(root, rel)).mtimeMs > built)
  return newer ? `prebuilds are older than ${newer}` : null
}

module.exports = { targets, localTarget, localTargets, prebuildProblem }
