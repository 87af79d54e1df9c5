// npm run soak -- --minutes N [--interval S]: drives every component under load in this process (and a second
// process sharing its regions) for N minutes, prints RSS and heap every S seconds (default 5:
// enough samples per third for a median) as a table, then a
// verdict: flat (no leak) or growing (exit code 1). See verdict.mjs for the criterion.
import { fork } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

import { createLoad } from './load.mjs'
import { startRedis } from './redis.mjs'
import { verdict } from './verdict.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '2' }, interval: { type: 'string', default: '5' } },
})
const minutes = Number(values.minutes)
const interval = Number(values.interval)
if (!(minutes > 0) || !(interval > 0)) throw new Error('--minutes and --interval must be numbers > 0')
const gc = globalThis.gc ?? (() => undefined)
if (!globalThis.gc) console.log('(run node with --expose-gc for heap figures after a full GC: npm run soak does)')

const prefix = `soak-${process.pid}`
const redis = await startRedis()
const load = createLoad(prefix, redis?.url)
const member = fork(path.join(here, 'member.cjs'), [prefix])
await new Promise((resolve) => member.once('message', resolve))
const ask = (message) => new Promise((resolve) => (member.once('message', resolve), member.send(message)))

console.log(
  `soak: ${minutes} min, every component in this process${redis ? ' (Redis limiter on a private redis-server)' : ' (no redis-server: Redis limiter left out)'}, a second process on the shared regions`,
)
console.log('')
console.log('| t (s) | RSS (MiB) | heap used (MiB) | external (MiB) | rounds/s | 2nd process RSS (MiB) |')
console.log('|---:|---:|---:|---:|---:|---:|')

// Load: 100 rounds every millisecond tick, as fast as the loop goes; a round makes one call to each component.
let rounds = 0
const work = setInterval(() => {
  load.step(100)
  rounds += 100
}, 1)

// A full GC frees the dead wrappers but not their native memory: N-API finalizers run in a later task, and until
// then "external" (and RSS) still hold it (seen: 63 MiB after one gc(), 18 MiB after gc, a 200 ms turn, gc). Without
// the second pass a sample's RSS depends on how many wrappers died since the last finalizer run, not on what is held.
async function settle() {
  gc()
  await new Promise((resolve) => setTimeout(resolve, 200))
  gc()
}

const samples = []
const started = Date.now()
let lastRounds = 0
await new Promise((resolve) => {
  const sample = async () => {
    await settle()
    const m = process.memoryUsage()
    const t = Math.round((Date.now() - started) / 1000)
    const { rss: memberRss } = await ask('rss')
    const rate = (rounds - lastRounds) / interval
    lastRounds = rounds
    samples.push({ t, rss: m.rss, external: m.external, heapUsed: m.heapUsed, rate })
    const mb = (x) => (x / 1024 / 1024).toFixed(1)
    console.log(
      `| ${t} | ${mb(m.rss)} | ${mb(m.heapUsed)} | ${mb(m.external)} | ${Math.round(rate)} | ${mb(memberRss)} |`,
    )
    if (Date.now() - started >= minutes * 60_000) resolve()
    else setTimeout(sample, interval * 1000)
  }
  setTimeout(sample, interval * 1000)
})

clearInterval(work)
await ask('stop')
await load.close()
redis?.stop()
await new Promise((r) => setTimeout(r, 100))
const leftover = fs.readdirSync('/dev/shm').filter((f) => f.includes(prefix))

// Warm-up: the first 20 % of the run, at least 30 s (code caches, allocator arenas, the hot-key cache filling).
const result = verdict(samples, Math.max(30, minutes * 60 * 0.2))
console.log('')
for (const line of result.lines) console.log(line)
console.log(`regions left in /dev/shm: ${leftover.length === 0 ? 'none' : leftover.join(', ')}`)
const ok = result.flat && leftover.length === 0
console.log(`verdict: ${ok ? 'FLAT (no leak)' : 'NOT FLAT'}`)
process.exit(ok ? 0 : 1)
