// One host of the outbound scenario: forks its workers (in the host's mount namespace when run under unshare, so
// that they share a /dev/shm of their own) and prints their results, one JSON line each.
import { fork } from 'child_process'
import * as path from 'path'
import { fileURLToPath } from 'url'

const here = path.dirname(fileURLToPath(import.meta.url))
const [workersArg, ...args] = process.argv.slice(2)
const results = await Promise.all(
  Array.from({ length: Number(workersArg) }, () => {
    const child = fork(path.join(here, 'worker.mjs'), args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    return new Promise((resolve) => child.on('exit', () => resolve(out.trim())))
  }),
)
for (const line of results) process.stdout.write(line + '\n')
