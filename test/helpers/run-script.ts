// Runs a short CommonJS script against dist/cjs in a child node process, with a time limit: for code that could
// hang (an endless loop cannot be interrupted inside the test's own process) or abort the process.
import { spawnSync } from 'child_process'
import * as path from 'path'

const dist = path.resolve(__dirname, '..', '..', 'dist', 'cjs')

export interface ScriptRun {
  status: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  stdout: string
  stderr: string
}

/** `body` runs with `b` bound to bulwark (dist/cjs); what it prints comes back in stdout. */
export function runScript(body: string, timeoutMs = 10_000, env: NodeJS.ProcessEnv = process.env): ScriptRun {
  const script = `const b = require(${JSON.stringify(dist)});\n${body}`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: timeoutMs, env })
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT'
  return { status: r.status, signal: r.signal, timedOut, stdout: r.stdout ?? '', stderr: r.stderr ?? '' }
}
