import { ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { performance } from 'perf_hooks'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import { SlidingWindowLimiter, TokenBucket } from '../../dist/cjs'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { openClock } = require('../fixtures/ratelimit-hammer.cjs')
const hammer = path.join(__dirname, '..', 'fixtures', 'ratelimit-hammer.cjs')
const holder = path.join(__dirname, '..', 'fixtures', 'ratelimit-lock-holder.cjs')
const WRITERS = 4

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

/** What greedy writers admit through a sliding window when the clock moves `step` ms each time it is empty. */
function slidingWindowModel(limit: number, bucketMs: number, buckets: number, step: number, stopAt: number): number {
  const perBucket = new Map<number, number>()
  let total = 0
  for (let t = 0; t <= stopAt; t += step) {
    const e = Math.floor(t / bucketMs)
    if (perBucket.has(e)) continue // filled when the clock first reached this bucket
    let live = 0
    for (let k = e - buckets + 1; k < e; k++) live += perBucket.get(k) ?? 0
    perBucket.set(e, limit - live)
    total += limit - live
  }
  return total
}

const scenarios = {
  'token-bucket': { options: { rate: 50_000, burst: 100 }, step: 1, stopAt: 4000, expected: 100 + 50 * 4000 },
  'sliding-window': {
    options: { limit: 1000, window: 100, buckets: 10 },
    step: 3,
    stopAt: 6000,
    expected: slidingWindowModel(1000, 10, 10, 3, 6000),
  },
} as const
type Kind = keyof typeof scenarios

function openObserver(kind: Kind, name: string) {
  // Created first, at fake time 0, so that every writer shares its origin.
  const sharing = { shared: name, now: () => 0 }
  return kind === 'token-bucket'
    ? new TokenBucket({ ...scenarios['token-bucket'].options, ...sharing })
    : new SlidingWindowLimiter({ ...scenarios['sliding-window'].options, ...sharing })
}

function runWriters(
  kind: Kind,
  mode: 'threads' | 'processes',
): Promise<Array<{ admitted: number; takeovers: number }>> {
  const name = uniqueName(`rl-${kind}`)
  const clockName = uniqueName('rl-clock')
  const clock = openClock(clockName)
  const observer = openObserver(kind, name)
  const s = scenarios[kind]
  const job = {
    role: 'hammer',
    kind,
    options: { ...s.options, shared: name },
    clockName,
    writers: WRITERS,
    step: s.step,
    stopAt: s.stopAt,
  }
  const runs = Array.from({ length: WRITERS }, () => {
    if (mode === 'threads') {
      return new Promise<{ admitted: number; takeovers: number }>((resolve, reject) => {
        const w = new Worker(hammer, { workerData: job })
        w.once('message', resolve)
        w.once('error', reject)
      })
    }
    return new Promise<{ admitted: number; takeovers: number }>((resolve, reject) => {
      const child = fork(hammer, [JSON.stringify(job)], { stdio: 'inherit' })
      children.push(child)
      child.once('message', resolve)
      child.once('exit', (code) => code !== 0 && reject(new Error(`hammer exited with ${code}`)))
    })
  })
  return Promise.all(runs).finally(() => {
    observer.close()
    clock.region.close()
  })
}

describe.each(['token-bucket', 'sliding-window'] as const)('%s shared by several writers', (kind) => {
  it.each(['threads', 'processes'] as const)(
    `${WRITERS} %s admit exactly what the limit allows over a fake clock`,
    async (mode) => {
      const results = await runWriters(kind, mode)
      const admitted = results.reduce((sum, r) => sum + r.admitted, 0)
      expect(admitted).toBe(scenarios[kind].expected)
      // The writers really overlapped, and nobody had to break a lock.
      expect(results.filter((r) => r.admitted > 0).length).toBeGreaterThanOrEqual(2)
      expect(results.every((r) => r.takeovers === 0)).toBe(true)
    },
  )
})

function holdLock(kind: Kind, options: object, halfway = 0): Promise<ChildProcess> {
  const child = fork(holder, [JSON.stringify({ kind, options, halfway })], { stdio: 'inherit' })
  children.push(child)
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child))
    child.once('exit', (code) => reject(new Error(`lock holder exited with ${code}`)))
  })
}

async function kill(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r))
  child.kill('SIGKILL')
  await gone
}

describe('a writer that dies or stalls holding the lock', () => {
  it('killed holder: the next writer takes the lock over at once and the bucket stays exact', async () => {
    const options = { rate: 1, burst: 10, shared: uniqueName('rl-dead') }
    const bucket = new TokenBucket({ ...options, now: () => 0 })
    const child = await holdLock('token-bucket', options)
    await kill(child)
    const start = performance.now()
    expect(bucket.tryAcquire()).toBe(true)
    expect(performance.now() - start).toBeLessThan(500)
    expect(bucket.lockTakeovers).toBe(1)
    let taken = 1
    while (bucket.tryAcquire()) taken++
    expect(taken).toBe(10)
    bucket.close()
  })

  it('a live holder that never lets go: takes are denied within a few ms, the lock lost after about a second', async () => {
    const options = { rate: 1, burst: 10, shared: uniqueName('rl-stuck') }
    const bucket = new TokenBucket({ ...options, now: () => 0 })
    const child = await holdLock('token-bucket', options)
    const start = performance.now()
    let longest = 0
    await waitFor(
      () => {
        const t = performance.now()
        const ok = bucket.tryAcquire()
        longest = Math.max(longest, performance.now() - t)
        return ok
      },
      { what: 'the lock to be taken over', interval: 20 },
    )
    expect(performance.now() - start).toBeGreaterThanOrEqual(1000)
    expect(longest).toBeLessThan(100) // each take waits at most a few ms (docs/guide/trust.md)
    expect(bucket.lockTakeovers).toBe(1)
    expect(bucket.stats().lockTimeouts).toBeGreaterThan(0)
    const reply = new Promise((r) => child.once('message', r))
    child.send('release')
    expect(await reply).toEqual({ released: false })
    bucket.close()
  })

  it('sliding window: a holder killed between its two stores is repaired from the buckets', async () => {
    const options = { limit: 10, window: 1000, buckets: 10, shared: uniqueName('rl-halfway') }
    const limiter = new SlidingWindowLimiter({ ...options, now: () => 0 })
    const child = await holdLock('sliding-window', options, 5)
    await kill(child)
    let taken = 0
    while (limiter.tryAcquire()) taken++
    expect(taken).toBe(5)
    expect(limiter.lockTakeovers).toBe(1)
    limiter.close()
  })
})
