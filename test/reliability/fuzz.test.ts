// Property-based fuzzing of every public constructor and method (fast-check), one child process per target so that
// a native abort or an endless loop fails its test instead of taking the runner down. FUZZ_SCALE multiplies the
// run counts; FUZZ_SEED=<n> replays a run (each report line carries its seed), FUZZ_SEED=random explores.
import { spawn } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

const runner = path.join(__dirname, 'fuzz', 'run-target.cjs')
const TARGETS = ['bbr', 'breakers', 'hotkeys', 'ratelimit', 'shared', 'misc', 'integrations', 'metrics', 'live-words']
const TIME_LIMIT_MS = 420_000

interface Report {
  target: string
  name?: string
  runs?: number
  seed?: number
  ms?: number
  ok?: boolean
  failure?: string
  done?: boolean
  failed?: number
}

function runTarget(target: string): Promise<{
  code: number | null
  signal: NodeJS.Signals | null
  reports: Report[]
  stderr: string
  timedOut: boolean
}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [runner, target], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, TIME_LIMIT_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const reports = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Report)
      resolve({ code, signal, reports, stderr, timedOut })
    })
  })
}

describe('fuzzing the public API (fast-check, one child process per target)', () => {
  for (const target of TARGETS) {
    it(
      `${target}: every property holds, the process exits cleanly`,
      async () => {
        const r = await runTarget(target)
        const properties = r.reports.filter((p) => p.name !== undefined)
        for (const p of properties) {
          // Printed for the record: how many cases each property ran, and how long it took.
          console.log(
            `${target} | ${p.ok ? 'ok  ' : 'FAIL'} | ${p.runs} runs | ${p.ms} ms | seed ${p.seed} | ${p.name}`,
          )
        }
        const failures = properties.filter((p) => !p.ok).map((p) => `${p.name}\n${p.failure}`)
        expect(failures).toEqual([])
        expect({ timedOut: r.timedOut, signal: r.signal, code: r.code, stderr: r.stderr.slice(0, 2000) }).toEqual({
          timedOut: false,
          signal: null,
          code: 0,
          stderr: '',
        })
        expect(r.reports.at(-1)).toMatchObject({ done: true, failed: 0 })
        expect(properties.length).toBeGreaterThan(0)
      },
      TIME_LIMIT_MS + 10_000,
    )
  }
})
