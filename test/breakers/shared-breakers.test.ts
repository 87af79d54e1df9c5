import { type ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import { CircuitBreaker, type CircuitStateChange, SreBreaker } from '../../dist/cjs'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

// Members run from dist/ (a worker thread or a child process cannot load TypeScript sources).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { circuitOptions, sreOptions, openBarrier } = require('../fixtures/breaker-member.cjs')
const member = path.join(__dirname, '..', 'fixtures', 'breaker-member.cjs')
const HALF_OPEN_CALLS = 3
const TRIPPED_AT = 1000
const HALF_OPEN_AT = 2000 // TRIPPED_AT + openDuration

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

type Task = Record<string, unknown>

function inThread<T>(task: Task): Promise<T> {
  return new Promise((resolve, reject) => {
    const w = new Worker(member, { workerData: task })
    w.once('message', resolve)
    w.once('error', reject)
  })
}

function inProcess<T>(task: Task): { child: ChildProcess; reply: Promise<T> } {
  const child = fork(member, [JSON.stringify(task)], { stdio: 'inherit' })
  children.push(child)
  const reply = new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T))
    child.once('exit', (code) => reject(new Error(`member exited with ${code} before replying`)))
  })
  return { child, reply }
}

/** A shared circuit breaker, opened at TRIPPED_AT by ten failures, on a clock the test moves. */
function trippedBreaker(name: string, clock = new ManualClock(TRIPPED_AT)) {
  const cb = new CircuitBreaker({ ...circuitOptions(name, 0), now: clock.now })
  for (let i = 0; i < 10; i++) cb.recordFailure(1)
  expect(cb.state).toBe('open')
  return { cb, clock }
}

async function probeRounds(spawn: (task: Task) => Promise<{ granted: number[] }>, writers: number) {
  const base = uniqueName('probes')
  const rounds = 20
  const held = Array.from({ length: rounds }, (_, r) => trippedBreaker(`${base}-${r}`).cb)
  const barrier = openBarrier(`${base}-barrier`)
  const task = { role: 'probe-rounds', base, rounds, tries: 5000, writers, time: HALF_OPEN_AT }
  const replies = await Promise.all(Array.from({ length: writers }, () => spawn(task)))
  barrier.region.close()
  const perRound = Array.from({ length: rounds }, (_, r) => replies.reduce((sum, reply) => sum + reply.granted[r], 0))
  for (const cb of held) {
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesIssued: HALF_OPEN_CALLS })
    cb.close()
  }
  return perRound
}

describe('shared CircuitBreaker: exactly halfOpenCalls probes across members', () => {
  it('4 worker_threads racing for permits get exactly 3 per round, 20 rounds', async () => {
    const perRound = await probeRounds((task) => inThread(task), 4)
    expect(perRound).toEqual(new Array(20).fill(HALF_OPEN_CALLS))
  })

  it('3 processes racing for permits get exactly 3 per round, 20 rounds', async () => {
    const perRound = await probeRounds((task) => inProcess<{ granted: number[] }>(task).reply, 3)
    expect(perRound).toEqual(new Array(20).fill(HALF_OPEN_CALLS))
  })
})

describe('shared CircuitBreaker: state across processes', () => {
  it('failures recorded in one process open the breaker for another, which reports the change', async () => {
    const name = uniqueName('cb-cross')
    const clock = new ManualClock(TRIPPED_AT)
    const cb = new CircuitBreaker({ ...circuitOptions(name, 0), now: clock.now })
    const seen: CircuitStateChange[] = []
    cb.onStateChange((c) => seen.push(c))
    expect(cb.tryAcquire()).toBe(true)
    const { reply } = inProcess<{ state: string }>({ role: 'fail', name, count: 10, time: TRIPPED_AT })
    expect((await reply).state).toBe('open')
    expect(cb.tryAcquire()).toBe(false)
    expect(seen).toEqual([{ from: 'closed', to: 'open', at: TRIPPED_AT }])
    clock.time = HALF_OPEN_AT
    expect(cb.tryAcquire()).toBe(true)
    expect(cb.state).toBe('half-open')
    cb.close()
  })

  it('a process killed while holding a probe does not wedge the breaker: its permit is handed out again after probeTimeout', async () => {
    const name = uniqueName('cb-killed')
    const { cb, clock } = trippedBreaker(name)
    const holder = inProcess<{ acquired: boolean; state: string }>({ role: 'hold-probe', name, time: HALF_OPEN_AT })
    expect(await holder.reply).toEqual({ acquired: true, state: 'half-open' })
    clock.time = HALF_OPEN_AT
    expect(cb.tryAcquire()).toBe(true)
    expect(cb.tryAcquire()).toBe(true)
    expect(cb.tryAcquire()).toBe(false)
    await new Promise((resolve) => {
      holder.child.once('exit', resolve)
      holder.child.kill('SIGKILL')
    })
    cb.recordSuccess(1)
    cb.recordSuccess(1)
    // Two of three probes passed; the third will never report.
    expect(cb.stats()).toMatchObject({ state: 'half-open', probesIssued: 3, probesPassed: 2 })
    clock.advance(999)
    expect(cb.tryAcquire()).toBe(false)
    clock.advance(1) // probeTimeout (1000 ms, the default: openDuration) since the round began
    let granted = 0
    for (let i = 0; i < 10; i++) if (cb.tryAcquire()) granted++
    expect(granted).toBe(HALF_OPEN_CALLS)
    for (let i = 0; i < HALF_OPEN_CALLS; i++) cb.recordSuccess(1)
    expect(cb.state).toBe('closed')
    cb.close()
  })
})

describe('shared SreBreaker: state across members', () => {
  it("failures marked in another process reach this process's decisions within 1 ms of its clock", async () => {
    const name = uniqueName('sre-cross')
    const clock = new ManualClock(TRIPPED_AT)
    const sre = new SreBreaker({ ...sreOptions(name, 0), now: clock.now, random: () => 0.5 })
    expect(sre.tryAcquire()).toBe(true)
    const { reply } = inProcess<{ state: string }>({ role: 'fail', kind: 'sre', name, count: 1000, time: TRIPPED_AT })
    expect((await reply).state).toBe('open')
    clock.advance(1)
    expect(sre.stats()).toMatchObject({ accepts: 0, calls: 1000, state: 'open' })
    expect(sre.tryAcquire()).toBe(false)
    sre.close()
  })

  it('another member in the same thread is seen within 1024 calls when the clock stands still', () => {
    const name = uniqueName('sre-members')
    const clock = new ManualClock(TRIPPED_AT)
    const options = { ...sreOptions(name, 0), now: clock.now }
    const reader = new SreBreaker(options)
    const writer = new SreBreaker(options)
    expect(reader.tryAcquire()).toBe(true)
    for (let i = 0; i < 1000; i++) writer.recordFailure()
    // The writer sees its own failures at once; the reader within the refresh bound.
    expect(writer.stats().calls).toBe(1000)
    let calls = 0
    while (reader.stats().calls === 0 && calls <= 1024) {
      reader.tryAcquire()
      calls++
    }
    expect(reader.stats().calls).toBeGreaterThanOrEqual(1000)
    expect(calls).toBeLessThanOrEqual(1024)
    expect(calls).toBeGreaterThan(0)
    reader.close()
    writer.close()
  })
})
