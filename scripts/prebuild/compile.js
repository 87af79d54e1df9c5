'use strict'
// Cross-compiles the addon for one target with `zig c++`: every native source to an object (in parallel, reusing
// objects newer than their inputs), then one link into a stripped shared object. Zig links its own libc++
// statically, so no binary needs the libstdc++ of the machine that loads it.
const { spawn } = require('child_process')
const crypto = require('crypto')
const fs = require('fs')
const os = require('os')
const path = require('path')

const nativeSources = require('../native-sources')
const { includeDir } = require('../node-headers')
const toolchains = require('./toolchains')
const { windowsImportLibrary } = require('./windows-import-lib')

const root = path.join(__dirname, '..', '..')
const addonApi = path.dirname(require.resolve('node-addon-api/package.json'))

// The flags of binding.gyp's release build, plus the ones that keep a shipped binary small: hidden symbols (only
// napi_register_module_v1 is exported) and a section per function so the linker drops what nothing calls.
const compileFlags = [
  '-std=c++17',
  '-O3',
  '-fno-exceptions',
  '-fvisibility=hidden',
  '-ffunction-sections',
  '-fdata-sections',
  '-Wall',
  '-Wextra',
  '-Wno-unused-parameter',
  '-DNAPI_VERSION=8',
  '-DNAPI_DISABLE_CPP_EXCEPTIONS',
  '-DNODE_ADDON_API_DISABLE_DEPRECATED',
]

function platformFlags(target) {
  if (target.format === 'elf') return { compile: ['-fPIC'], link: ['-Wl,--gc-sections', '-s'] }
  // Node resolves the N-API symbols when it loads the addon, as node-gyp's -undefined dynamic_lookup does. Zig's
  // Mach-O linker ignores -s: local symbols are stripped after the link. The install name is the file's own, not
  // the path it was linked at in the build cache.
  if (target.format === 'macho')
    return {
      compile: [],
      link: ['-Wl,-undefined,dynamic_lookup', '-Wl,-dead_strip', `-Wl,-install_name,${target.file}`],
    }
  return { compile: ['-DWIN32_LEAN_AND_MEAN', '-D_WIN32_WINNT=0x0A00'], link: ['-s'] }
}

function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (status) => {
      if (stderr) process.stderr.write(stderr)
      if (status === 0) resolve()
      else reject(new Error(`${path.basename(command)} ${args.slice(0, 3).join(' ')} ... exited ${status}`))
    })
  })
}

// Runs `jobs` at most `limit` at a time; the first failure wins once the running ones end.
async function pool(jobs, limit) {
  let next = 0
  const errors = []
  async function worker() {
    while (next < jobs.length && errors.length === 0) {
      const job = jobs[next++]
      await job().catch((error) => errors.push(error))
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker))
  if (errors.length > 0) throw errors[0]
}

// Objects are cached under a name made of everything that goes into them: the target and flags, the compiler's and
// node-addon-api's versions, the contents of Node's API headers, of every native header and of the source. So an
// object is reused exactly when compiling again would give the same one, in any clone and on any branch: CI points
// BULWARK_PREBUILD_CACHE outside its fresh clone (.ci/run) and compiles only what changed.
const cacheRoot = path.resolve(process.env.BULWARK_PREBUILD_CACHE || path.join(root, 'build-prebuild'))
const nodeApiHeaders = ['node_api.h', 'node_api_types.h', 'js_native_api.h', 'js_native_api_types.h', 'uv.h']

function digest(parts) {
  const hash = crypto.createHash('sha256')
  for (const part of parts) hash.update(part).update('\0')
  return hash.digest('hex').slice(0, 16)
}

function inputsDigest(target, flags, zig, headers) {
  const nativeHeaders = nativeSources.collect('native', (name) => name.endsWith('.h'))
  return digest([
    target.zig,
    ...compileFlags,
    ...flags.compile,
    require(path.join(path.dirname(zig), 'package.json')).version,
    require(path.join(addonApi, 'package.json')).version,
    ...nodeApiHeaders.map((name) => fs.readFileSync(path.join(headers, name))),
    ...nativeHeaders.flatMap((rel) => [rel, fs.readFileSync(path.join(root, rel))]),
  ])
}

function zeroPeTimestamp(file) {
  const bytes = fs.readFileSync(file)
  bytes.writeUInt32LE(0, bytes.readUInt32LE(0x3c) + 8) // COFF header: after "PE\0\0", Machine and NumberOfSections
  fs.writeFileSync(file, bytes)
}

/** Builds `target` into `<outDir>/<target.file>` and returns that path. */
async function compileTarget(target, { outDir, jobs = os.availableParallelism?.() ?? os.cpus().length } = {}) {
  const zig = toolchains.zig()
  const headers = includeDir()
  if (!headers) throw new Error('no Node headers found (set npm_config_nodedir): <uv.h> and node_api.h are needed')
  const flags = platformFlags(target)
  const args = ['-target', target.zig, ...compileFlags, ...flags.compile]
  args.push(`-I${addonApi}`, `-I${path.join(root, 'native')}`, `-I${headers}`)

  const objDir = path.join(cacheRoot, target.id, inputsDigest(target, flags, zig, headers))
  fs.mkdirSync(objDir, { recursive: true })
  // A <stem>_<os>.cc file is compiled only for its OS (scripts/native-sources.js).
  const sources = nativeSources.sourcesFor(target.platform).map((rel) => {
    const stem = rel.replace(/[/\\]/g, '_').replace(/\.cc$/, '')
    const object = path.join(objDir, `${stem}-${digest([fs.readFileSync(path.join(root, rel))])}.o`)
    return { source: path.join(root, rel), object }
  })
  const objects = sources.map(({ object }) => object)
  const stale = sources.filter(({ object }) => !fs.existsSync(object))
  // Compiled under a temporary name and renamed: an interrupted build never leaves a broken object in the cache.
  await pool(
    stale.map(
      ({ source, object }) =>
        () =>
          run(zig, ['c++', ...args, '-c', source, '-o', `${object}.${process.pid}.tmp`]).then(() =>
            fs.renameSync(`${object}.${process.pid}.tmp`, object),
          ),
    ),
    jobs,
  )

  const libraries = target.format === 'pe' ? [windowsImportLibrary(zig, objects, objDir)] : []
  // Linked beside the objects, then copied: lld writes an import library and a .pdb next to a DLL, which nothing
  // loads and which must not reach prebuilds/.
  const linked = path.join(objDir, target.file)
  await run(zig, ['c++', '-target', target.zig, '-shared', ...flags.link, ...objects, ...libraries, '-o', linked])
  // LLVM's strip (Debian's llvm) with -x, as Apple advises for a loadable bundle: local symbols go, the exported
  // napi_register_module_v1 and the symbols Node provides stay.
  if (target.format === 'macho') await run('llvm-strip', ['-x', linked])
  // lld stamps a PE with the link time, and Zig 0.11 passes no flag that stops it: zeroed (the header's checksum is
  // 0, so nothing else changes), every binary is the same bytes from the same inputs.
  if (target.format === 'pe') zeroPeTimestamp(linked)
  const output = path.join(outDir, target.file)
  fs.mkdirSync(outDir, { recursive: true })
  fs.copyFileSync(linked, output)
  return output
}

module.exports = { compileTarget }
