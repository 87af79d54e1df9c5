// Memory of waiting (issue 35): 100 000 callers waiting on one limiter, against 100 000 bare pending promises, and
// 100 000 pending promises whose resolve functions are kept (what any waiting needs to settle them later), and the
// same waits with p-queue and bottleneck (local). Heap measured after GC, in a process of its own per case.
//
//   node --expose-gc bench/outbound/waiters.mjs
import { execFileSync } from 'child_process'
import { createRequire } from 'module'
import { fileURLToPath } from 'url'
import { machine, peer, writeTable } from '../harness.mjs'

const N = 100_000
const require = createRequire(import.meta.url)
const cases = {
  'bare pending promises': () => {
    const keep = []
    for (let i = 0; i < N; i++) keep.push(new Promise(() => {}))
    return keep
  },
  'pending promises + their resolve': () => {
    const keep = []
    const settle = []
    for (let i = 0; i < N; i++) keep.push(new Promise((resolve) => settle.push(resolve)))
    return [keep, settle]
  },
  'TokenBucket.acquire (bulwark)': () => {
    const { TokenBucket } = require('../../dist/cjs/index.js')
    const bucket = new TokenBucket({ rate: 0.001, burst: 1, maxQueue: N + 1 })
    bucket.tryAcquire()
    const keep = []
    for (let i = 0; i < N; i++) keep.push(bucket.acquire(1, { maxWait: 3_600_000 }))
    return [bucket, keep]
  },
  'p-queue add (interval)': async () => {
    const { default: PQueue } = await import('p-queue')
    const queue = new PQueue({ intervalCap: 1, interval: 3_600_000 })
    const keep = []
    for (let i = 0; i < N; i++) keep.push(queue.add(() => undefined))
    return [queue, keep]
  },
  'bottleneck schedule (local)': () => {
    const Bottleneck = require('bottleneck')
    const limiter = new Bottleneck({ reservoir: 0 })
    const keep = []
    for (let i = 0; i < N; i++) keep.push(limiter.schedule(() => Promise.resolve()))
    return [limiter, keep]
  },
}

async function measureOne(name) {
  const heap = () => {
    global.gc()
    global.gc()
    return process.memoryUsage().heapUsed
  }
  // Load the code first, so that only the waiting is counted.
  const warm = await cases[name]()
  void warm
  const before = heap()
  const kept = await cases[name]()
  await new Promise((r) => setImmediate(r))
  const after = heap()
  void kept
  process.stdout.write(JSON.stringify({ bytes: (after - before) / N }))
  process.exit(0)
}

if (process.argv[2] === '--case') await measureOne(process.argv[3])
else {
  const self = fileURLToPath(import.meta.url)
  const bytes = {}
  for (const name of Object.keys(cases)) {
    const out = execFileSync(process.execPath, ['--expose-gc', self, '--case', name], { encoding: 'utf8' })
    bytes[name] = JSON.parse(out).bytes
  }
  const bare = bytes['bare pending promises']
  const resolvable = bytes['pending promises + their resolve']
  writeTable(
    'Waiting: memory of 100 000 waiters on one limiter',
    ['case', 'bytes per waiter', 'beyond bare promises', 'beyond promises + resolve'],
    Object.entries(bytes).map(([name, b]) => [
      name,
      b.toFixed(0),
      (b - bare).toFixed(0),
      name === 'bare pending promises' ? '' : (b - resolvable).toFixed(0),
    ]),
    { peers: [peer('p-queue'), peer('bottleneck')], note: `Heap after GC, one process per case. ${machine()}` },
  )
}
