import { fork } from 'child_process'
import * as path from 'path'
import { Worker } from 'worker_threads'
import { describe, expect, it } from 'vitest'

import { AtomicCounter, LaneCounter, RollingWindow, SharedRegion } from '../../dist/cjs'
import { uniqueName } from '../helpers/unique-name'

// The adder runs from dist/ (a worker thread or a child process cannot load TypeScript sources).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { describeRegion } = require('../fixtures/shared-adder.cjs')
const adder = path.join(__dirname, '..', 'fixtures', 'shared-adder.cjs')
const ADDS = 1_000_000

function openObserver(name: string) {
  const d = describeRegion(16)
  const region = SharedRegion.open(name, d.layout)
  return {
    region,
    atomic: new AtomicCounter(region, d.atomic),
    lane: new LaneCounter(region, d.lanes),
    still: new RollingWindow(region, d.still),
    rolling: new RollingWindow(region, d.rolling),
  }
}

function expectExact(o: ReturnType<typeof openObserver>, writers: number) {
  expect(o.atomic.load()).toBe(writers * ADDS)
  expect(o.lane.total()).toBe(writers * ADDS)
  expect(o.still.total(5)).toEqual({ count: writers * ADDS, sum: writers * ADDS })
  // Epochs 90..99 are live at the end: each writer put ADDS / 100 adds in each of them.
  expect(o.rolling.total(99).count).toBe((writers * ADDS * 10) / 100)
}

describe('shared counters and windows under concurrent writers', () => {
  it('2 worker_threads x 1 000 000 adds end exact', async () => {
    const name = uniqueName('threads')
    const observer = openObserver(name)
    const runs = [0, 1].map(
      () =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(adder, { workerData: { role: 'adder', name, adds: ADDS, writers: 2 } })
          w.once('message', () => resolve())
          w.once('error', reject)
        }),
    )
    await Promise.all(runs)
    expectExact(observer, 2)
    observer.region.close()
  })

  it('2 processes x 1 000 000 adds end exact', async () => {
    const name = uniqueName('procs')
    const observer = openObserver(name)
    const runs = [0, 1].map(
      () =>
        new Promise<void>((resolve, reject) => {
          const child = fork(adder, [name, String(ADDS), '2'], { stdio: 'inherit' })
          child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`adder exited with ${code}`))))
        }),
    )
    await Promise.all(runs)
    expectExact(observer, 2)
    observer.region.close()
  })
})
