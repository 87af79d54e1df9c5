// Line and function coverage of native/ (the core and the binding, not native/**/test/) from gcov, the coverage
// tool of the GCC that builds the addon here (Debian's gcc; --coverage at compile and link time). Every .gcda file
// under the given directories (the instrumented addon the test suite loaded, the C++ harnesses) is read with
// `gcov --json-format --stdout`; a line or function counts as run when any object saw it run (an inline function
// of a header is compiled into many objects).
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'

function gcdaFiles(dir) {
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((name) => name.endsWith('.gcda'))
    .map((name) => path.resolve(dir, name))
}

/** Whether `file` (absolute) is native code of the package: under native/, outside any test/ folder. */
function counted(root, file) {
  const rel = path.relative(root, file)
  return rel.startsWith(`native${path.sep}`) && !rel.split(path.sep).includes('test')
}

/**
 * `{ lines, functions, files }`: percentages over native/ and, per source file, its lines run and lines in all.
 * Throws when there is no coverage data (nothing ran the instrumented code).
 */
export function nativeCoverage(root, dirs) {
  const lines = new Map() // file -> Map(line -> run)
  const functions = new Map() // file:line:name -> run
  const gcdas = dirs.flatMap(gcdaFiles)
  if (gcdas.length === 0) throw new Error(`no .gcda files under ${dirs.join(', ')}: nothing ran the instrumented code`)
  for (const gcda of gcdas) {
    const run = spawnSync('gcov', ['--json-format', '--stdout', gcda], {
      cwd: path.dirname(gcda),
      encoding: 'utf8',
      maxBuffer: 256 << 20,
    })
    if (run.status !== 0) throw new Error(`gcov ${gcda} failed: ${run.stderr}`)
    for (const report of run.stdout.split('\n').filter(Boolean)) {
      const { files, current_working_directory: cwd } = JSON.parse(report)
      for (const source of files) {
        const file = path.resolve(cwd, source.file)
        if (!counted(root, file)) continue
        const seen = lines.get(file) ?? new Map()
        lines.set(file, seen)
        for (const line of source.lines) seen.set(line.line_number, seen.get(line.line_number) || line.count > 0)
        for (const fn of source.functions) {
          const key = `${file}:${fn.start_line}:${fn.name}`
          functions.set(key, functions.get(key) || fn.execution_count > 0)
        }
      }
    }
  }
  const percent = (run, all) => (all === 0 ? 0 : (100 * run) / all)
  const files = [...lines].map(([file, seen]) => ({
    file: path.relative(root, file),
    run: [...seen.values()].filter(Boolean).length,
    all: seen.size,
  }))
  const run = files.reduce((n, f) => n + f.run, 0)
  const all = files.reduce((n, f) => n + f.all, 0)
  const fnRun = [...functions.values()].filter(Boolean).length
  return {
    lines: percent(run, all),
    functions: percent(fnRun, functions.size),
    linesRun: run,
    linesAll: all,
    files: files.sort((a, b) => a.file.localeCompare(b.file)),
  }
}
