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
  // Mach-O linker ignores -s: local symbols are stripped after the link.
  if (target.format === 'macho') return { compile: [], link: ['-Wl,-undefined,dynamic_lookup', '-Wl,-dead_strip'] }
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

function newestHeader() {
  const headers = [...nativeSources.collect('native', (name) => name.endsWith('.h'))].map((rel) => path.join(root, rel))
  return Math.max(0, ...headers.map((file) => fs.statSync(file).mtimeMs))
}

/** Builds `target` into `<outDir>/<target.file>` and returns that path. */
async function compileTarget(target, { outDir, jobs = os.availableParallelism?.() ?? os.cpus().length } = {}) {
  const zig = toolchains.zig()
  const headers = includeDir()
  if (!headers) throw new Error('no Node headers found (set npm_config_nodedir): <uv.h> and node_api.h are needed')
  const flags = platformFlags(target)
  const args = ['-target', target.zig, ...compileFlags, ...flags.compile]
  args.push(`-I${addonApi}`, `-I${path.join(root, 'native')}`, `-I${headers}`)

  // Objects live in a folder named after the flags, so a flag change never reuses a stale object.
  const key = crypto.createHash('sha256').update(args.join('\0')).digest('hex').slice(0, 12)
  const objDir = path.join(root, 'build-prebuild', target.id, key)
  fs.mkdirSync(objDir, { recursive: true })
  const headersChanged = newestHeader()
  // A <stem>_<os>.cc file is compiled only for its OS (scripts/native-sources.js).
  const sources = nativeSources.sourcesFor(target.platform)
  const objects = sources.map((rel) => path.join(objDir, rel.replace(/[/\\]/g, '_').replace(/\.cc$/, '.o')))
  const stale = sources
    .map((rel, index) => ({ source: path.join(root, rel), object: objects[index] }))
    .filter(({ source, object }) => {
      if (!fs.existsSync(object)) return true
      const built = fs.statSync(object).mtimeMs
      return built < fs.statSync(source).mtimeMs || built < headersChanged
    })
  await pool(
    stale.map(
      ({ source, object }) =>
        () =>
          run(zig, ['c++', ...args, '-c', source, '-o', object]),
    ),
    jobs,
  )

  const libraries = target.format === 'pe' ? [windowsImportLibrary(zig, objects, objDir)] : []
  const output = path.join(outDir, target.file)
  fs.mkdirSync(outDir, { recursive: true })
  await run(zig, ['c++', '-target', target.zig, '-shared', ...flags.link, ...objects, ...libraries, '-o', output])
  // lld writes an import library and a .pdb next to a DLL: nothing loads them.
  for (const extra of ['.lib', '.pdb']) fs.rmSync(output.replace(/\.node$/, extra), { force: true })
  // LLVM's strip (Debian's llvm) with -x, as Apple advises for a loadable bundle: local symbols go, the exported
  // napi_register_module_v1 and the symbols Node provides stay.
  if (target.format === 'macho') await run('llvm-strip', ['-x', output])
  return output
}

module.exports = { compileTarget }
