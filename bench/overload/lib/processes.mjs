// Starting and stopping the servers a scenario drives: each is a child process that prints its port (one line)
// once it listens.
import { spawn } from 'child_process'
import * as path from 'path'
import { fileURLToPath } from 'url'

export const serversDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'servers')

/** Starts `servers/<script>` with `env` added; resolves { child, port }. */
export function startServer(script, env = {}) {
  const child = spawn(process.execPath, [path.join(serversDir, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening`)))
    child.stdout.once('data', (d) => {
      child.removeAllListeners('exit')
      resolve({ child, port: Number(String(d).trim()) })
    })
  })
}

export async function stopServer(child) {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
}

/** GET http://127.0.0.1:<port><path> as JSON (the servers' control and stats endpoints). */
export async function getJson(port, pathname) {
  const response = await fetch(`http://127.0.0.1:${port}${pathname}`)
  return response.json()
}
