// The environment that loads the sanitizer build of the addon (npm run build:cmake:asan) into node: the ASan
// runtime preloaded (node itself is not built with it), BULWARK_NATIVE pointing at the build, UBSan halting on the
// first report. Child processes and worker threads inherit it.
import { execFileSync, spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'

export const root = path.resolve(__dirname, '..', '..')
export const asanAddon = path.join(root, 'build-cmake-asan', 'Release', 'bulwark.node')

/** Newest modification time of the addon's sources (native/core and native/binding). */
function newestSource(): number {
  let newest = 0
  for (const dir of ['core', 'binding']) {
    for (const f of fs.readdirSync(path.join(root, 'native', dir)))
      newest = Math.max(newest, fs.statSync(path.join(root, 'native', dir, f)).mtimeMs)
  }
  return newest
}

/**
 * Builds the sanitizer addon if it is missing or older than a source (CI builds it just before the suite; a local
 * build may predate the code under test, and would then test the wrong thing).
 */
export function ensureAsanBuild(): void {
  if (fs.existsSync(asanAddon) && fs.statSync(asanAddon).mtimeMs >= newestSource()) return
  const r = spawnSync('flock', ['/tmp/bulwark-build.lock', 'npm', 'run', 'build:cmake:asan'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 600_000,
  })
  if (r.status !== 0) throw new Error(`npm run build:cmake:asan failed:\n${r.stdout}\n${r.stderr}`)
}

export function asanEnv(extra: { detectLeaks?: boolean; logPath?: string } = {}): NodeJS.ProcessEnv {
  const runtime = execFileSync(process.env.CXX ?? 'g++', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim()
  const asan = [`detect_leaks=${extra.detectLeaks ? 1 : 0}`, 'abort_on_error=0', 'allocator_may_return_null=1']
  if (extra.logPath) asan.push(`log_path=${extra.logPath}`)
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env))
    if (/^npm_/i.test(key) || key === 'NODE_OPTIONS' || key.startsWith('VITEST')) delete env[key]
  return {
    ...env,
    BULWARK_NATIVE: asanAddon,
    LD_PRELOAD: runtime,
    ASAN_OPTIONS: asan.join(':'),
    // Leaks are reported, not fatal: the test reads the report and fails on those with a frame in bulwark's code.
    LSAN_OPTIONS: `exitcode=0:suppressions=${path.join(__dirname, 'lsan-suppressions.txt')}:print_suppressions=0`,
    UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
  }
}

/** The sanitizer reports in a run's output: ASan errors and UBSan runtime errors. */
export function sanitizerErrors(output: string): string[] {
  return output
    .split('\n')
    .filter((l) => /ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer: detected memory leaks/.test(l))
}

/** Leak blocks of a LeakSanitizer report that have a frame in bulwark's native code. */
export function bulwarkLeaks(report: string): string[] {
  return report
    .split(/\n(?=(?:Direct|Indirect) leak of )/)
    .filter((block) => /^(Direct|Indirect) leak of /.test(block) && /native\/(core|binding)\/|bulwark::/.test(block))
}
