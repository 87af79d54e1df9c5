'use strict'
// Packs tsc's CommonJS emit (dist/cjs, one file per module) into a few files. Node pays about 0.1 MB of resident
// memory and a few file-system calls for every file it loads, whatever its size, so a worker that loaded the 60
// small files of BbrLimiter paid more for the files than for the code (docs/guide/install.md, "Entry points and what
// loading costs"). Each module keeps its own function, evaluated when it is first required, exactly as Node would:
//   dist/cjs/packed/loader.js   the module table: which pack defines each module, load() with Node's cache rules
//   dist/cjs/packed/<pack>.js   the modules' code, each wrapped in a function registered with the loader
//   dist/cjs/<module>.js        a one-line stub that loads its module from the table, so every path that worked
//                               before (package.json exports, the bin, deep requires in tests) still gives the
//                               same instance
const fs = require('fs')
const path = require('path')
const ts = require('typescript')

// tsc writes "…" for imports; a require() in our own source keeps its '…'.
const REQUIRE = /\brequire\((["'])(\.{1,2}\/[^"']+)\1\)/g
// A require that runs when its module is evaluated (tsc's `const x_1 = require("…");` and `__exportStar(require(…`);
// one inside a function, or an import marked `// bulwark:lazy`, runs when that code first does.
const EAGER =
  /^(?:(?:const|var|let) [\w$]+ = (?:__importStar\()?|__exportStar\()?require\((["'])(\.{1,2}\/[^"']+)\1\)(?!.*\/\/ bulwark:lazy$)/gm
// `import { X } from './x' // bulwark:lazy`: tsc keeps the comment on the line of its require.
const LAZY_IMPORT = /^const ([\w$]+) = require\("([^"]+)"\); \/\/ bulwark:lazy$/gm

function listModules(cjs) {
  const ids = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (entry.name.endsWith('.js')) ids.push(path.relative(cjs, file).slice(0, -3).split(path.sep).join('/'))
    }
  }
  walk(cjs)
  return ids.sort()
}

// A relative specifier, as Node resolves it for our own emit: the file itself, or the folder's index.
function resolveId(known, from, specifier) {
  const base = path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, '')
  if (known.has(base)) return base
  if (known.has(`${base}/index`)) return `${base}/index`
  throw new Error(`scripts/pack-cjs.js: ${from} requires ${specifier}, which is not in dist/cjs`)
}

// A require on a line marked `// bulwark:separate` loads a part that has a pack of its own (what only a process
// started with BULWARK_RULES runs): not followed when packs are chosen, so the pack of the module requiring it does
// not take that part in.
const SEPARATE = /^.*\/\/ bulwark:separate$/gm

// Every module reachable from `roots` through relative requires: all of them (lazy ones included: a subpath's
// pack holds what its lazy getters load), or with `eager`, only those a module's evaluation runs.
function reach(sources, known, roots, eager = false) {
  const seen = new Set()
  const stack = [...roots]
  while (stack.length > 0) {
    const id = stack.pop()
    if (seen.has(id)) continue
    seen.add(id)
    for (const [, , specifier] of sources
      .get(id)
      .replace(SEPARATE, '')
      .matchAll(eager ? EAGER : REQUIRE))
      stack.push(resolveId(known, id, specifier))
  }
  return seen
}

// Each module goes to the first pack (in the order given) whose roots reach it; what no pack reaches goes to the
// last one. A `shallow` pack holds its roots only; an `eager` one what its roots load when evaluated. An `own` pack holds what its roots load when evaluated and no
// other `own` pack's roots do: a component family (what a BbrLimiter alone runs), or a part loaded lazily (what
// only the `fairness` option runs); what several of them share goes to a later pack that reaches it, and so does
// what an `entry` pack's roots export themselves (Shed, OverloadError: read without any component).
function assignPacks(sources, known, packs) {
  const packOf = {}
  const ownRoots = new Set(packs.filter((p) => p.own).flatMap((p) => p.roots))
  const exported = new Set()
  for (const root of packs.filter((p) => p.entry).flatMap((p) => p.roots)) {
    for (const [, , specifier] of sources.get(root).matchAll(REQUIRE)) exported.add(resolveId(known, root, specifier))
  }
  const owners = new Map()
  for (const { name, roots, own } of packs) {
    if (!own) continue
    for (const id of reach(sources, known, roots, true)) owners.set(id, owners.has(id) ? null : name)
  }
  for (const [id, name] of owners) if (name !== null && (ownRoots.has(id) || !exported.has(id))) packOf[id] = name
  for (const { name, roots, shallow, own, eager } of packs) {
    if (own) continue
    for (const id of shallow ? roots : reach(sources, known, roots, eager)) packOf[id] ??= name
  }
  const last = packs[packs.length - 1].name
  for (const id of known) packOf[id] ??= last
  return packOf
}

// A `// bulwark:lazy` import becomes a function that requires the module on first call, and each use `x_1.Name`
// becomes `x_1().Name`: the module is loaded when code that needs it first runs (docs/guide/install.md, "Entry
// points and what loading costs"). Kept on one line, so lines still match tsc's source map.
function deferLazyImports(id, body) {
  let out = body
  for (const [line, variable, specifier] of body.matchAll(LAZY_IMPORT)) {
    const uses = new RegExp(`\\b${variable.replace(/\$/g, '\\$')}\\b(?!\\.)`, 'g')
    const rest = out.replace(line, '')
    if ([...rest.matchAll(uses)].length > 0) {
      throw new Error(`scripts/pack-cjs.js: ${id} uses its lazy import ${specifier} other than as ${variable}.Name`)
    }
    const name = variable.replace(/\$/g, '\\$')
    out = out
      // `new x_1().Name(…)` would call Name on an instance of x_1(): the constructor is read first.
      .replace(new RegExp(`\\bnew ${name}\\.([\\w$]+)`, 'g'), `new (${variable}().$1)`)
      .replace(new RegExp(`\\b${name}\\.`, 'g'), `${variable}().`)
      .replace(
        line,
        `let ${variable}_loaded; const ${variable} = () => (${variable}_loaded ??= require("${specifier}")); // bulwark:lazy`,
      )
  }
  return out
}

const LOADER = `'use strict'
// Generated by scripts/pack-cjs.js: the table of bulwark's modules, loaded as Node loads CommonJS files (one
// instance each, cached before it runs so cycles see a partial exports object, dropped from the cache when it
// throws). Requires between our modules were resolved when the packs were written ("#<id>"), so loading does no
// path work: a loader that joined paths per require made Node's path code hot enough for V8's optimizing compiler,
// whose pages then added 4 MB to the resident memory of every process.
const path = require('path')

const root = path.dirname(__dirname)
const sep = path.sep
const packOf = __PACK_OF__
const definitions = new Map()
const cache = new Map()

exports.define = (id, body) => definitions.set(id, body)

function local(specifier) {
  return specifier.charCodeAt(0) === 35 ? load(specifier.slice(1)) : require(specifier)
}

function load(id) {
  const cached = cache.get(id)
  if (cached !== undefined) return cached.exports
  if (!(id in packOf)) throw new Error(\`bulwark: no module \${id} in this build\`)
  if (!definitions.has(id)) require(\`./\${packOf[id]}.js\`)
  // One template and one slice (splitting the id and joining its parts cost 0.5 M instructions over a core use).
  const filename = \`\${root}\${sep}\${sep === '/' ? id : id.replaceAll('/', sep)}.js\`
  const dirname = filename.slice(0, filename.lastIndexOf(sep))
  const module = { id, filename, exports: {}, loaded: false }
  cache.set(id, module)
  try {
    definitions.get(id).call(module.exports, module.exports, local, module, filename, dirname)
  } catch (error) {
    cache.delete(id)
    throw error
  }
  module.loaded = true
  return module.exports
}
exports.load = load
`

// Comments cost every process that loads a pack: V8 scans them again each time it parses a function (the pack's
// first pass, each module, each function's first call). They are removed, keeping every line where it was, so that
// tsc's source maps still apply (a comment followed by code on its line becomes spaces: columns stay too). Found
// with TypeScript's parser, so that nothing inside a string, a template or a regular expression is touched.
function stripComments(text) {
  const file = ts.createSourceFile('module.js', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS)
  const ranges = new Map()
  const add = (found) => {
    for (const range of found ?? []) ranges.set(range.pos, range.end)
  }
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.pos))
    add(ts.getLeadingCommentRanges(text, node.end))
    ts.forEachChild(node, visit)
  }
  visit(file)
  let out = ''
  let at = 0
  for (const [pos, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const comment = text.slice(pos, end)
    const codeFollows = /\S/.test(
      text.slice(end, text.indexOf('\n', end) === -1 ? text.length : text.indexOf('\n', end)),
    )
    out += text.slice(at, pos) + (codeFollows ? comment.replace(/[^\n]/g, ' ') : comment.replace(/[^\n]/g, ''))
    at = end
  }
  return (out + text.slice(at)).replace(/[ \t]+$/gm, '')
}

// Source maps: tsc's map of each module, rebased onto the pack (one plain map: Node 20 ignores sectioned ones).
// Mappings are base-64 VLQ numbers, each relative to the one before it in the map (docs: the Source Map spec).
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

function decodeVlq(segment) {
  const values = []
  let value = 0
  let shift = 0
  for (const char of segment) {
    const digit = BASE64.indexOf(char)
    value += (digit & 31) << shift
    shift += 5
    if (digit < 32) {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1)
      value = 0
      shift = 0
    }
  }
  return values
}

function encodeVlq(values) {
  let out = ''
  for (const v of values) {
    let rest = v < 0 ? (-v << 1) | 1 : v << 1
    do {
      const digit = rest & 31
      rest >>>= 5
      out += BASE64[rest > 0 ? digit | 32 : digit]
    } while (rest > 0)
  }
  return out
}

class PackMap {
  sources = []
  lines = []
  // The previous segment's source, original line and column (relative across the whole map).
  last = [0, 0, 0]

  // Adds tsc's map of module `id` (if it wrote one) for a body that starts at pack line `line` (0-based).
  add(cjs, id, line) {
    const file = path.join(cjs, `${id}.js.map`)
    if (!fs.existsSync(file)) return
    const map = JSON.parse(fs.readFileSync(file, 'utf8'))
    const first = this.sources.length
    for (const source of map.sources) {
      const absolute = path.resolve(path.dirname(file), map.sourceRoot ?? '', source)
      this.sources.push(path.relative(path.join(cjs, 'packed'), absolute).split(path.sep).join('/'))
    }
    const state = [0, 0, 0]
    map.mappings.split(';').forEach((segments, i) => {
      let column = 0
      const out = []
      for (const segment of segments.split(',').filter(Boolean)) {
        const [dColumn, dSource, dLine, dOriginal] = decodeVlq(segment)
        column += dColumn
        if (dSource === undefined) continue
        state[0] += dSource
        state[1] += dLine
        state[2] += dOriginal
        const now = [first + state[0], state[1], state[2]]
        out.push([column, now[0] - this.last[0], now[1] - this.last[1], now[2] - this.last[2]])
        this.last = now
      }
      let previous = 0
      this.lines[line + i] = out
        .map(([c, ...rest]) => {
          const text = encodeVlq([c - previous, ...rest])
          previous = c
          return text
        })
        .join(',')
    })
  }

  toJSON(file) {
    const lines = Array.from({ length: this.lines.length }, (_, i) => this.lines[i] ?? '')
    return JSON.stringify({ version: 3, file, sources: this.sources, names: [], mappings: lines.join(';') })
  }
}

// Writes the packs, the loader and the stubs. A pack marked `atLoad` holds modules that run as soon as it loads (a
// component family, a lazily loaded part): each module's function is wrapped in parentheses, which V8 takes as the
// sign to compile it with the pack instead of pre-parsing it then parsing it again when it runs. Each pack gets a
// sectioned source map (one section per module, tsc's own map), so that stack traces under --enable-source-maps
// name the lib/ files and lines.
function pack(cjs, packs) {
  const ids = listModules(cjs)
  const known = new Set(ids)
  const sources = new Map(ids.map((id) => [id, fs.readFileSync(path.join(cjs, `${id}.js`), 'utf8')]))
  const packOf = assignPacks(sources, known, packs)
  const out = path.join(cjs, 'packed')
  fs.mkdirSync(out)
  // A JSON string, not an object literal: V8 parses JSON faster than it compiles a literal of 180 properties
  // (require('bulwark') ran 0.3 M fewer instructions, callgrind).
  const table = `JSON.parse(${JSON.stringify(JSON.stringify(packOf))})`
  fs.writeFileSync(
    path.join(out, 'loader.js'),
    LOADER.replace('__PACK_OF__', () => table),
  )
  for (const { name, atLoad } of packs) {
    const parts = [`'use strict'\nconst { define } = require('./loader')\n`]
    let line = 2
    const map = new PackMap()
    for (const id of ids.filter((m) => packOf[m] === name)) {
      const source = sources.get(id)
      const shebang = source.startsWith('#!') ? 1 : 0
      const body = stripComments(
        deferLazyImports(id, source)
          .replace(/^#!.*\n/, '')
          .replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n')
          .replace(REQUIRE, (_, quote, specifier) => `require("#${resolveId(known, id, specifier)}")`),
      )
      const fn = `function (exports, require, module, __filename, __dirname) {\n${body}}`
      // An entry module (entries/…) runs only for those who load that entry: pre-parsed, as in any pack.
      const text = `define(${JSON.stringify(id)}, ${atLoad && !id.startsWith('entries/') ? `(${fn})` : fn})\n`
      // The body starts on the line after define(; a shebang tsc's map counts was dropped.
      map.add(cjs, id, line + 1 - shebang)
      parts.push(text)
      line += text.split('\n').length - 1
    }
    parts.push(`//# sourceMappingURL=${name}.js.map\n`)
    fs.writeFileSync(path.join(out, `${name}.js`), parts.join(''))
    fs.writeFileSync(path.join(out, `${name}.js.map`), map.toJSON(`${name}.js`))
  }
  for (const id of ids) {
    const file = path.join(cjs, `${id}.js`)
    const shebang = sources.get(id).startsWith('#!') ? sources.get(id).split('\n', 1)[0] + '\n' : ''
    const loader = path.posix.relative(path.posix.dirname(id), 'packed/loader')
    const stub = `${shebang}'use strict'\n// Generated by scripts/pack-cjs.js: the code is in packed/${packOf[id]}.js.\nmodule.exports = require('${loader.startsWith('.') ? loader : `./${loader}`}').load(${JSON.stringify(id)})\n`
    fs.writeFileSync(file, stub)
    fs.rmSync(`${file}.map`, { force: true })
  }
  return packOf
}

module.exports = { pack }
