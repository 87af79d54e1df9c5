// Native memory safety: the C++ harnesses and the JavaScript tests that drive native code, under AddressSanitizer
// and UndefinedBehaviorSanitizer; 200+ worker threads using every component under LeakSanitizer.
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { beforeAll, describe, expect, it } from 'vitest'

import { asanEnv, bulwarkLeaks, ensureAsanBuild, root, sanitizerErrors } from './sanitizer-env'

describe('native code under the sanitizers', () => {
  beforeAll(() => ensureAsanBuild(), 600_000)

  it('every C++ harness in native/test runs clean with ASan + UBSan (and LeakSanitizer)', () => {
    const r = spawnSync(path.join(root, 'scripts', 'native-tests.sh'), [], {
      cwd: root,
      encoding: 'utf8',
      timeout: 600_000,
    })
    const output = `${r.stdout}\n${r.stderr}`
    console.log(r.stdout.trim())
    expect(sanitizerErrors(output)).toEqual([])
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null })
    expect(r.stdout).toMatch(/shared_region_test: ok/)
  })

  it('the JavaScript tests that drive native code pass against the sanitizer build, with no report', () => {
    const files = ['test/shared', 'test/hotkeys', 'test/cgroup-cpu.test.ts', 'test/signals.test.ts', 'test/bbr']
    const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs')
    const r = spawnSync(process.execPath, [vitest, 'run', '--project', 'unit', ...files], {
      cwd: root,
      encoding: 'utf8',
      timeout: 900_000,
      env: asanEnv(),
    })
    const output = `${r.stdout}\n${r.stderr}`
    console.log(
      output
        .split('\n')
        .filter((l) => /Test Files|Tests |FAIL|×/.test(l))
        .join('\n'),
    )
    expect(sanitizerErrors(output)).toEqual([])
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null })
  })

  it('210 worker threads use every component and exit: no crash, no leak in bulwark code, nothing left in /dev/shm', () => {
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-lsan-'))
    const prefix = `lsan-churn-${process.pid}`
    const fixture = path.join(__dirname, 'fixtures', 'worker-churn.cjs')
    // Three rounds of 35 workers one after another and 35 in batches of 7 at once.
    const r = spawnSync(process.execPath, ['--expose-gc', fixture, prefix, '35', '35', '7'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 600_000,
      env: asanEnv({ detectLeaks: true, logPath: path.join(logDir, 'report') }),
    })
    const reports = fs
      .readdirSync(logDir)
      .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
      .join('\n')
    fs.rmSync(logDir, { recursive: true, force: true })
    const phases = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
    console.log(r.stdout.trim())
    expect(sanitizerErrors(reports).filter((l) => !/LeakSanitizer/.test(l))).toEqual([])
    expect(bulwarkLeaks(reports)).toEqual([])
    expect({ status: r.status, signal: r.signal, stderr: r.stderr.slice(0, 2000) }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    })
    expect(phases.at(-1)).toEqual({ phase: 'done', workers: 210, inFlightAfterWorkers: 0, leftover: [] })
  })
})
