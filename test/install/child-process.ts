// Helpers for the install tests: run node and npm in child processes, with an environment free of the npm
// lifecycle variables that `npm test` sets (they would leak into the nested npm as config).
import { spawnSync } from 'child_process'
import { existsSync } from 'fs'
import { dirname, join, resolve } from 'path'

export const packageRoot = resolve(__dirname, '..', '..')

/** How much slower than native this run is: scripts/cross/ sets BULWARK_TIME_SCALE for emulated Node. */
export const timeScale = Math.max(1, Number(process.env.BULWARK_TIME_SCALE) || 1)

export interface Run {
  status: number | null
  stdout: string
  stderr: string
}

export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD' && key !== 'NODE_OPTIONS') env[key] = value
  }
  return { ...env, ...extra }
}

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Run {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 170_000 * timeScale })
  if (result.error) throw result.error
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Fails with the child's output when it did not exit 0, so a failed step explains itself. */
export function runOk(command: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  const result = run(command, args, cwd, env)
  if (result.status !== 0) {
    throw new Error(`${[command, ...args].join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`)
  }
  return result.stdout
}

/** npm's CLI script, run with this node: the tests must not depend on an `npm` on PATH. */
export function npmCli(): string {
  const candidates = [
    process.env.npm_execpath && join(dirname(process.env.npm_execpath), 'npm-cli.js'),
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    '/usr/lib/node_modules/npm/bin/npm-cli.js',
  ]
  const found = candidates.find((file) => file && existsSync(file))
  if (!found) throw new Error(`npm-cli.js not found (looked in ${candidates.filter(Boolean).join(', ')})`)
  return found
}

export function npm(args: string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  return runOk(process.execPath, [npmCli(), ...args], cwd, env)
}

/** Runs a script in a child node and parses the JSON it prints last. */
export function nodeJson<T>(args: string[], cwd: string, env?: NodeJS.ProcessEnv): T {
  const lines = runOk(process.execPath, args, cwd, env).trim().split('\n')
  return JSON.parse(lines[lines.length - 1]) as T
}
