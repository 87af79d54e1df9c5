// A shared keyed table (KeyedLimiter's table form with `shared`) across real processes and worker threads: exact
// on a hot key, usable after members are killed mid-update, bounded under a peer writing garbage, and one layout for
// the C++ protocol and the JavaScript one (docs/rules/keyed-table.md).
import { type ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import { AtomicCounter, KeyedLimiter, RegionLayout, SharedRegion } from '../../dist/cjs'
import { native } from '../../lib/foundation/native/load-native'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const hammer = path.join(__dirname, '..', 'fixtures', 'keyed-hammer.cjs')
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

interface Internals {
  limits: { table: { i32: Int32Array; slots: number; capacity: number; total(name: string): number } }
}
const tableOf = (k: KeyedLimiter) => (k as unknown as Internals).limits.table

function start(job: object): ChildProcess {
  const child = fork(hammer, [JSON.stringify(job)], { stdio: 'inherit' })
  children.push(child)
  return child
}

function message<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T))
    child.once('error', reject)
  })
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  )

async function hotKey(mode: 'threads' | 'processes'): Promise<{ admitted: number; retried: number }> {
  const name = uniqueName('kt-hot')
  const options = { rate: 1, burst: 100, maxKeys: 1000 }
  // Made first, at fake time 1000, so that every writer shares its origin and seed.
  const observer = new KeyedLimiter({ ...options, shared: name, now: () => 1000 })
  const job = { role: 'hot', name, start: uniqueName('kt-start'), writers: 4, attempts: 1000, options, key: 'hot' }
  const results = await Promise.all(
    Array.from({ length: 4 }, () => {
      if (mode === 'processes') return message<{ admitted: number; retried: number }>(start(job))
      return new Promise<{ admitted: number; retried: number }>((resolve, reject) => {
        const w = new Worker(hammer, { workerData: job })
        w.once('message', resolve)
        w.once('error', reject)
      })
    }),
  )
  expect(observer.tryAcquire('hot')).toBe(false)
  observer.close()
  return results.reduce((a, r) => ({ admitted: a.admitted + r.admitted, retried: a.retried + r.retried }))
}

describe('KeyedLimiter table, shared', () => {
  it('4 processes on one hot key with burst 100: exactly 100 of 4 000 attempts', async () => {
    const total = await hotKey('processes')
    expect(total.admitted).toBe(100)
  })

  it('4 worker threads on one hot key with burst 100: exactly 100 of 4 000 attempts', async () => {
    const total = await hotKey('threads')
    expect(total.admitted).toBe(100)
  })

  it('is one table for every member: a key claimed by one is found by another, its budget shared', () => {
    const name = uniqueName('kt-two')
    let time = 5000
    const a = new KeyedLimiter({ rate: 10, burst: 10, maxKeys: 100, shared: name, now: () => time })
    const b = new KeyedLimiter({ rate: 10, burst: 10, maxKeys: 100, shared: name, now: () => time })
    let admitted = 0
    for (let i = 0; i < 30; i++) admitted += Number(a.tryAcquire('k')) + Number(b.tryAcquire('k'))
    expect(admitted).toBe(10)
    time += 300
    expect([b.tryAcquire('k'), a.tryAcquire('k'), b.tryAcquire('k'), a.tryAcquire('k')]).toEqual([
      true,
      true,
      true,
      false,
    ])
    expect(a.stats().created).toBe(1)
    expect(a.has('k') && b.has('k')).toBe(true)
    a.close()
    b.close()
  })

  it('runs the C++ protocol and the JavaScript one on one block and stays exact', () => {
    const { keyedAcquire, keyedFingerprint } = native as unknown as {
      keyedAcquire: (...args: unknown[]) => { admitted: number; refused: number; created: number }
      keyedFingerprint: (key: string, k0: number, k1: number) => [number, number]
    }
    const region = uniqueName('kt-cc')
    const keyed = new KeyedLimiter({ rate: 10, burst: 8, maxKeys: 100, shared: region, now: () => 2000 })
    const t = tableOf(keyed) as unknown as {
      i32: Int32Array
      slots: number
      buckets: number
      k0: number
      k1: number
      limit: { one: number; tau: number }
    }
    const slots = new Int32Array(t.i32.buffer, t.slots * 4, t.buckets * 8 * 4)
    expect(keyedFingerprint('203.0.113.9', t.k0 >>> 0, t.k1 >>> 0)).toHaveLength(2)
    expect(keyed.tryAcquire('203.0.113.9', 3)).toBe(true)
    // C++ at the same instant (the origin is 2000 and so is now: tick 0, epoch 0), at the table's cost per permit.
    const step = [0, 0, 0, t.limit.one, t.limit.tau]
    const cc = keyedAcquire(slots, t.buckets, '203.0.113.9', t.k0 >>> 0, t.k1 >>> 0, ...step, 20)
    expect(cc).toMatchObject({ admitted: 5, refused: 15, created: 0 })
    expect(keyed.tryAcquire('203.0.113.9')).toBe(false)
    const fresh = keyedAcquire(slots, t.buckets, 'from-c++', t.k0 >>> 0, t.k1 >>> 0, ...step, 2)
    expect(fresh).toMatchObject({ admitted: 2, created: 1 })
    expect(keyed.has('from-c++')).toBe(true)
    let admitted = 0
    for (let i = 0; i < 10; i++) admitted += Number(keyed.tryAcquire('from-c++'))
    expect(admitted).toBe(6)
    keyed.close()
  })

  it('stays usable when a member is killed mid-update: at most the request it was making is lost', async () => {
    for (let round = 0; round < 6; round++) {
      const name = uniqueName('kt-kill')
      const counter = uniqueName('kt-count')
      const burst = 2_000_000
      const options = { rate: 1, burst, maxKeys: 64 }
      const observer = new KeyedLimiter({ ...options, shared: name, now: () => 1000 })
      const layout = new RegionLayout('keyed-test-count', 8).describe('count=1')
      const cell = layout.cell(0, true)
      const region = SharedRegion.open(counter, layout)
      const admittedByChild = new AtomicCounter(region, cell)
      const child = start({ role: 'hot-kill', name, counter, options, key: 'hot' })
      await message(child)
      await waitFor(() => admittedByChild.load() > 1000 + round * 5000, { what: 'the child admitting' })
      child.kill('SIGKILL')
      await exited(child)
      // What the child took (counted after each admission: a kill between the two loses one count) and what is left.
      let left = 0
      while (observer.tryAcquire('hot', 1000)) left += 1000
      while (observer.tryAcquire('hot')) left++
      const total = admittedByChild.load() + left
      expect(total === burst || total === burst - 1).toBe(true)
      observer.close()
      region.close()
    }
  })

  it('breaks a claim its member left behind (killed mid-claim) a second later', async () => {
    const name = uniqueName('kt-claim')
    let time = 1000
    const options = { rate: 10, burst: 10, maxKeys: 4 } // one bucket: every key lands in it
    const observer = new KeyedLimiter({ ...options, shared: name, now: () => time })
    const churner = start({ role: 'churn', name, options })
    await message(churner)
    await waitFor(() => observer.stats().created >= 8, { what: 'the churner claiming' })
    churner.kill('SIGKILL')
    await exited(churner)
    const t = tableOf(observer)
    // Whether or not the kill landed inside a claim, leave one as a claimant killed mid-claim would.
    t.i32[t.slots] = 0x80000000 | 77
    t.i32[t.slots + 1] = 0
    time = 1000 + 200 // claimed 200 ms ago: maybe still under way, so a new key is refused, not given a budget
    const before = t.total('contended')
    expect(observer.tryAcquire('newcomer')).toBe(false)
    expect(t.total('contended')).toBe(before + 1)
    time = 1000 + 5000 // over a second: the claim is broken, the slot serves again
    expect(observer.tryAcquire('newcomer')).toBe(true)
    expect(observer.stats().table?.brokenClaims).toBeGreaterThanOrEqual(1)
    for (let i = 0; i < t.capacity; i++) expect(t.i32[t.slots + 4 * i]).toBeGreaterThanOrEqual(0)
    observer.close()
  })

  it('bounds what a peer writing garbage into the slots can do: every call returns, fresh keys stay exact', async () => {
    const name = uniqueName('kt-vandal')
    const options = { rate: 1, burst: 20, maxKeys: 256 }
    let time = 1000
    const keyed = new KeyedLimiter({ ...options, shared: name, now: () => time })
    const vandal = start({ role: 'vandal', name, options })
    await message(vandal)
    const t = tableOf(keyed)
    await waitFor(() => t.i32.subarray(t.slots, t.slots + t.capacity * 4).some((w) => w !== 0), { what: 'garbage' })
    let calls = 0
    for (let i = 0; i < 100_000; i++) {
      keyed.tryAcquire(`k${i % 500}`)
      keyed.retryAfterMs(`k${i % 7}`)
      calls++
    }
    expect(calls).toBe(100_000)
    vandal.kill('SIGKILL')
    await exited(vandal)
    time += 100_000 // the keys used above (500 of them, in slots for 256) are all at rest again
    let exact = 0
    for (let k = 0; k < 50; k++) {
      let admitted = 0
      for (let i = 0; i < 40; i++) admitted += Number(keyed.tryAcquire(`after-${k}`))
      if (admitted === 20) exact++
    }
    expect(exact).toBe(50)
    keyed.close()
  })
})
