#!/usr/bin/env node
// Builds dist/ from lib/ (docs/architecture.md, "The build"). The entry points are package.json's `exports` and `bin`:
//   dist/cjs/<entry>.js            one CommonJS bundle per subpath, at the path tsc gives lib/<entry>.ts, holding the
//                                  code that only this entry loads
//   dist/cjs/chunks/<chunk>.js     what two or more entries load: core (all that 'bulwark/core' reaches: errors,
//                                  addon, regions, the core components), root (what the root entry adds: keyed
//                                  pools, bulkheads...) and shared (the rest: the guards, the exporters' code), so
//                                  a process holds one copy of each class and registry, whichever entries it loads
//   dist/esm/<entry>.mjs           the ES module entries: each exports its CommonJS bundle's values, so `import`
//                                  and `require` share that one copy too (Node's "dual package hazard")
//   dist/cjs/**/*.d.ts             the declarations, from tsc
//   dist/cjs/ops/cli/bulwark.js    the `bulwark` command, a bundle of its own (it runs in its own process)
// Three chunks, not one per set of entries (a bundler's default): Node pays for each file it loads, and that split
// gave require('bulwark') 22 files (13.8 ms of CPU and 8.5 MB, against 9.8 ms and 3.8 MB; Node 20).
// tsc writes the declarations, and each lib/ module as a CommonJS file of its own into dist-internal/ (not shipped,
// outside dist/): the test threads and processes and the scripts that need an internal module (a region's file
// name, the addon's layouts, the metric catalogue) load it from there.
import { execFileSync } from 'child_process'
import * as fs from 'fs'
import { createRequire } from 'module'
import * as path from 'path'
import { build } from 'rolldown'
import { fileURLToPath } from 'url'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = path.join(root, 'dist')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
// The output of one entry, from its package.json path: './dist/cjs/entries/http.js' -> 'entries/http'.
const cjsName = (target) => path.posix.relative('./dist/cjs', target).replace(/\.js$/, '')
const entries = Object.values(pkg.exports)
  .filter((target) => typeof target === 'object')
  .map((target) => ({ name: cjsName(target.require), esm: path.posix.relative('./dist/esm', target.import) }))
const bin = cjsName(pkg.bin.bulwark)
const source = (name) => path.join(root, 'lib', `${name}.ts`)

const input = {
  cwd: root,
  platform: 'node',
  // Node's modules, node-gyp-build and the optional peers load from where the application installed them.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  logLevel: 'warn',
}
const output = {
  format: 'cjs',
  // Stack traces under --enable-source-maps name the lib/ file and line; the maps hold no copy of the sources.
  sourcemap: true,
  sourcemapExcludeSources: true,
  comments: false,
}

for (const dir of [dist, path.join(root, 'dist-internal')]) fs.rmSync(dir, { recursive: true, force: true })
execFileSync(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', root], {
  stdio: 'inherit',
})

// The chunk of a module that two or more entries load: core when the 'bulwark/core' entry reaches it, else root
// when the root entry does, else shared. So each entry loads, besides its own file, what it needs of these three.
const chunkEntries = [
  ['core', source('entries/core')],
  ['root', source('index')],
]
let reached
function chunkOf(id, context) {
  reached ??= chunkEntries.map(([chunk, entry]) => {
    const modules = new Set()
    const stack = [entry]
    while (stack.length > 0) {
      const next = stack.pop()
      if (modules.has(next)) continue
      modules.add(next)
      stack.push(...(context.getModuleInfo(next)?.importedIds ?? []))
    }
    return [chunk, modules]
  })
  return reached.find(([, modules]) => modules.has(id))?.[0] ?? 'shared'
}

const { output: chunks } = await build({
  ...input,
  input: Object.fromEntries(entries.map(({ name }) => [name, source(name)])),
  output: {
    ...output,
    dir: path.join(dist, 'cjs'),
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name].js',
    // A module that one entry loads stays in that entry's file.
    codeSplitting: { groups: [{ name: chunkOf, debugName: 'core, root or shared', minShareCount: 2 }] },
  },
})

// The ES module entries: each name of the CommonJS bundle bound to its value, the class or function itself.
// createRequire comes from process.getBuiltinModule, which costs an import less than `import ... from 'module'`,
// and a require, unlike an import of the CommonJS file, does not make Node scan it for its names.
fs.mkdirSync(path.join(dist, 'esm'))
for (const { name, esm } of entries) {
  const { exports } = chunks.find((chunk) => chunk.fileName === `${name}.js`)
  const cjs = path.posix.relative(path.posix.dirname(`dist/esm/${esm}`), `dist/cjs/${name}.js`)
  const lines = [
    `// Generated by scripts/build-ts.mjs: the ES module entry of ${cjs} (one copy of the code for import and require).`,
    `const entry = process.getBuiltinModule('module').createRequire(import.meta.url)('${cjs}')`,
    `export const { ${exports.join(', ')} } = entry`,
    // What Node gives for a default import of a CommonJS package, and what its declarations (CommonJS) allow.
    'export default entry',
    '',
  ]
  fs.writeFileSync(path.join(dist, 'esm', esm), lines.join('\n'))
}

// The `bulwark` command (package.json "bin").
await build({
  ...input,
  input: { [bin]: source(bin) },
  output: { ...output, dir: path.join(dist, 'cjs'), entryFileNames: '[name].js', codeSplitting: false },
})
fs.chmodSync(path.join(dist, 'cjs', `${bin}.js`), 0o755)
