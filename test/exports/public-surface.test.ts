// The package's public surface (docs/vocabulary.md, "Module layout"): every entry point of package.json `exports`,
// read from what ships (dist/), lists exactly the names in public-names.ts. A new name fails here until it is added
// there on purpose (and documented); an internal one (a helper, a hash, a snapshot constructor) stays out of the
// entries, or carries `@internal`, which `stripInternal` removes from the declarations.
import * as fs from 'fs'
import { createRequire } from 'module'
import * as path from 'path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

import { publicNames } from './public-names'

const root = path.join(__dirname, '..', '..')
const require = createRequire(__filename)
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; require: string }>
}
const entries = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'string' ? [] : [{ subpath, types: path.join(root, target.types), main: target.require }],
)

const program = ts.createProgram(
  entries.map((e) => e.types),
  { strict: true, skipLibCheck: false, noEmit: true, types: ['node'], module: ts.ModuleKind.CommonJS },
)
const checker = program.getTypeChecker()

function isInternal(declaration: ts.Declaration): boolean {
  return ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal')
}

function exportsOf(file: string): ts.Symbol[] {
  const source = program.getSourceFile(file)
  const moduleSymbol = source && checker.getSymbolAtLocation(source)
  if (moduleSymbol === undefined) throw new Error(`no declarations at ${file}: run npm run build:ts`)
  return checker.getExportsOfModule(moduleSymbol)
}

/** Members (instance and static) of an exported class or interface that are marked @internal. */
function internalMembers(symbol: ts.Symbol): string[] {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const found: string[] = []
  for (const declaration of target.declarations ?? []) {
    if (isInternal(declaration)) found.push(symbol.name)
    if (!ts.isClassDeclaration(declaration) && !ts.isInterfaceDeclaration(declaration)) continue
    for (const member of declaration.members) {
      if (isInternal(member)) found.push(`${symbol.name}.${member.name?.getText() ?? '?'}`)
    }
  }
  return found
}

describe('the public surface', () => {
  it('the declarations of every entry type-check on their own (nothing stripped is still referenced)', () => {
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
    expect(problems).toEqual([])
    // A whole type-check of the declarations: seconds when the machine is quiet, more on a busy CI machine.
  }, 120_000)

  for (const entry of entries) {
    describe(`'bulwark${entry.subpath.slice(1)}'`, () => {
      const declared = exportsOf(entry.types)

      it('exports exactly the names listed as public', () => {
        const names = declared.map((s) => s.name).sort()
        const listed = [...(publicNames[entry.subpath] ?? [])].sort()
        expect({
          added: names.filter((n) => !listed.includes(n)),
          missing: listed.filter((n) => !names.includes(n)),
        }).toEqual({ added: [], missing: [] })
      })

      it('declares nothing marked @internal (stripInternal)', () => {
        expect(declared.flatMap(internalMembers)).toEqual([])
      })

      it('has at run time exactly the values its declarations promise', () => {
        const values = declared
          .filter((s) => {
            const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s
            return (target.flags & ts.SymbolFlags.Value) !== 0
          })
          .map((s) => s.name)
          .sort()
        const loaded = require(path.join(root, entry.main)) as Record<string, unknown>
        expect(
          Object.keys(loaded)
            .filter((k) => k !== 'default')
            .sort(),
        ).toEqual(values)
        for (const name of values) expect(loaded[name], name).toBeDefined()
      })
    })
  }
})
