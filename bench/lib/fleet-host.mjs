// One host of the fleet benchmark (bench/fleet.bench.mjs), run inside a mount namespace of its own with a private
// /dev/shm: it starts `workers` worker processes (bench/lib/fleet-worker.cjs) with the environment it was given
// (BULWARK_RULES, BULWARK_NAMESPACE, BULWARK_RULES_CACHE, BULWARK_HOST), passes their reports on as JSON lines on
// stdout, and obeys commands read from stdin: `kill-watcher` (SIGKILL the worker that watches the source) and
// `stop`.
import { fork } from 'child_process'
import * as path from 'path'
import * as readline from 'readline'
import { fileURLToPath } from 'url'

const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fleet-worker.cjs')
const count = Number(process.argv[2] ?? 4)
const host = process.env.BULWARK_HOST
const children = new Map()
const watching = new Set()

const out = (message) => process.stdout.write(`${JSON.stringify({ host, ...message })}\n`)

for (let i = 0; i < count; i++) {
  const child = fork(worker, [], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] })
  children.set(child.pid, child)
  child.on('message', (m) => {
    if (m.type === 'state') {
      if (m.watching) watching.add(m.pid)
      else watching.delete(m.pid)
    }
    out(m)
  })
  child.on('exit', () => {
    children.delete(child.pid)
    watching.delete(child.pid)
  })
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'kill-watcher') {
    const [pid] = watching
    if (pid === undefined) return out({ type: 'killed', pid: 0 })
    children.get(pid)?.kill('SIGKILL')
    out({ type: 'killed', pid })
  } else if (line === 'stop') {
    for (const child of children.values()) child.kill('SIGKILL')
    process.exit(0)
  }
})
