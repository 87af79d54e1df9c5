// A claim of a slot under way is never taken for an abandoned one (docs/rules/keyed-table.md, "Finding and claiming
// a slot"): a member stopped right after marking a slot claimed (a real worker thread, held there by the test) is
// waited for, then refused on, by another member that needs the same new key, however old the table is. Breaking
// that claim gave the key two budgets (KeyConcurrencyLimiter admitted 10 of max 5 under load).
import * as path from 'path'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import { KeyConcurrencyLimiter, KeyedLimiter } from '../../dist/cjs'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const pauser = path.join(__dirname, '..', 'fixtures', 'claim-pause.cjs')
const workers: Worker[] = []
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.terminate()))
})

interface Paused {
  /** Lets the member finish its request; resolves with whether it was admitted. */
  finish(): Promise<boolean>
}

/** Starts a member of table `name` that takes `key` at `now` and stops right after marking a slot claimed. */
async function pausedClaim(job: { kind: 'count' | 'rate'; name: string; key: string; options: object; now: number }) {
  const control = new SharedArrayBuffer(8)
  const flags = new Int32Array(control)
  const w = new Worker(pauser, { workerData: { ...job, control } })
  workers.push(w)
  const done = new Promise<{ admitted: boolean; paused: boolean }>((resolve, reject) => {
    w.once('message', resolve)
    w.once('error', reject)
  })
  await waitFor(() => Atomics.load(flags, 0) === 1, { what: 'the member to stop mid-claim' })
  const paused: Paused = {
    async finish() {
      Atomics.store(flags, 1, 1)
      Atomics.notify(flags, 1)
      const r = await done
      expect(r.paused).toBe(true)
      return r.admitted
    },
  }
  return paused
}

describe('keyed table, a claim under way', () => {
  it('count table: a member stopped mid-claim of a new key is not broken; the key keeps one limit', async () => {
    const name = uniqueName('kt-claim-count')
    // The host's clock is far past the table's origin (0): an empty slot's check word (0) reads as an old claim.
    const options = { max: 1, maxKeys: 64 }
    const here = new KeyConcurrencyLimiter({ ...options, shared: name, now: () => 5000 })
    try {
      const other = await pausedClaim({ kind: 'count', name, key: 'tenant', options, now: 5000 })
      const mine = here.tryAcquire('tenant')
      const theirs = await other.finish()
      expect([mine >= 0, theirs].filter(Boolean)).toHaveLength(1)
      expect(here.inFlight('tenant')).toBe(1)
      expect(here.tryAcquire('tenant')).toBeLessThan(0)
    } finally {
      here.close()
    }
  })

  it('rate table: a member stopped mid-claim of a new key is not broken; the key keeps one budget', async () => {
    const name = uniqueName('kt-claim-rate')
    let time = 1000
    const options = { rate: 1, burst: 1, maxKeys: 64 }
    // Made at 1000 (the origin); the requests come at 5000, when an empty slot's check word (0) reads 4 s old.
    const here = new KeyedLimiter({ ...options, shared: name, now: () => time })
    time = 5000
    try {
      const other = await pausedClaim({ kind: 'rate', name, key: 'tenant', options, now: 5000 })
      const mine = here.tryAcquire('tenant')
      const theirs = await other.finish()
      expect([mine, theirs].filter(Boolean)).toHaveLength(1)
      expect(here.tryAcquire('tenant')).toBe(false)
    } finally {
      here.close()
    }
  })
})
