// Live rules of the outbound components across the host (docs/rules/live-rules.md): an AdaptiveBulkhead's and a
// RetryBudget's rule changed in one process reaches every worker thread and process within a second; `bulwark set`
// switches their shadow mode from a shell and `bulwark top` shows what they would have refused.
import { type ChildProcess, execFile, fork } from 'child_process'
import * as path from 'path'
import { promisify } from 'util'
import { afterEach, describe, expect, it } from 'vitest'

import { AdaptiveBulkhead, defaultNamespace, Priority, RetryBudget, Shed } from '../../dist/cjs'
import { simulateUpstream } from '../adaptive/upstream-sim'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import '../helpers/cleanup-regions'

const member = path.join(__dirname, '..', 'fixtures', 'rules-outbound-member.cjs')
const cli = path.join(__dirname, '..', '..', 'dist', 'cjs', 'ops', 'cli', 'bulwark.js')
const run = promisify(execFile)

interface Report {
  member: string
  event: 'ready' | 'bulkhead' | 'budget'
  at: number
}

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

describe('live rules of the outbound components across the host', () => {
  it("a bulkhead's maxLimit and a retry budget's ratio changed in another process: every worker obeys within 1 s", async () => {
    const names = [uniqueName('rules-bulkhead'), uniqueName('rules-budget')]
    const reports: Report[] = []
    for (let i = 0; i < 2; i++) {
      const child = fork(member, names, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      child.on('message', (m) => reports.push(m as Report))
      children.push(child)
    }
    const count = (event: Report['event']) => new Set(reports.filter((r) => r.event === event).map((r) => r.member))
    await waitFor(() => count('ready').size === 4, { what: '4 members (2 processes x 2 threads) under the old rules' })

    const bulkhead = new AdaptiveBulkhead({ shared: names[0], window: 200, buckets: 20 })
    const budget = new RetryBudget({ shared: names[1], ratio: 0, minPerSecond: 0 })
    try {
      bulkhead.configure({ latency: { maxLimit: 7 } })
      budget.configure({ ratio: 1, minPerSecond: 1e6 })
      const changedAt = Date.now()
      await waitFor(() => count('bulkhead').size === 4 && count('budget').size === 4, { what: 'every member obeys' })
      const delays = reports.filter((r) => r.event !== 'ready').map((r) => r.at - changedAt)
      expect(delays).toHaveLength(8)
      expect(Math.max(...delays)).toBeLessThanOrEqual(1000)
    } finally {
      bulkhead.close()
      budget.close()
    }
  })

  it('bulwark set switches shadow mode; bulwark top shows the bulkhead, the budget and what they would refuse', async () => {
    const clock = new ManualClock(1000)
    const shared = uniqueName('shadow-cli')
    const bulkhead = new AdaptiveBulkhead({ now: clock.now, shared })
    const budget = new RetryBudget({ now: clock.now, shared, ratio: 0, minPerSecond: 0 })
    const slots = { concurrency: 8, serviceMs: 20, priority: () => Priority.normal }
    simulateUpstream(bulkhead, clock, [{ rate: 1200, seconds: 3, ...slots }])
    const held: number[] = []
    for (let token = bulkhead.tryAcquire(); token >= 0 && held.length < 1000; token = bulkhead.tryAcquire())
      held.push(token)
    try {
      expect([bulkhead.tryAcquire(), budget.tryAcquire()]).toEqual([Shed.latency, false])
      const set = await run(process.execPath, [cli, 'set', `bulkhead.${shared}`, 'shadow=on', 'latency.buffer=0.5'])
      expect(set.stdout).toMatch(`bulkhead.${defaultNamespace()}.${shared}: rule version 1: latency.buffer=0.5 `)
      await run(process.execPath, [cli, 'set', `retry-budget.${shared}`, 'shadow=on'])
      const token = bulkhead.tryAcquire()
      expect(token).toBeGreaterThanOrEqual(0)
      bulkhead.release(token)
      expect([budget.tryAcquire(), budget.tryAcquire()]).toEqual([true, true])

      const top = await run(process.execPath, [cli, 'top', shared, '--once', '--json', '--interval', '0.05'])
      const frame = JSON.parse(top.stdout.trim().split('\n').pop() as string)
      const views = Object.fromEntries(frame.regions.map((r: { kind: string; view: unknown }) => [r.kind, r.view]))
      expect(views.bulkhead).toMatchObject({
        type: 'bulkhead',
        inFlight: bulkhead.inFlight,
        latency: { shedding: true },
        rules: { version: 1, values: { 'latency.buffer': 0.5 }, shadow: { enabled: true } },
      })
      expect(views['retry-budget']).toMatchObject({
        type: 'retry-budget',
        retries: 0,
        rules: { version: 1, shadow: { enabled: true, wouldRefuse: [{ reason: 'budget', count: 2 }] } },
      })
      const text = await run(process.execPath, [cli, 'top', shared, '--once', '--interval', '0.05'])
      expect(text.stdout).toMatch(/RATE LIMITS[\s\S]*retry budget[\s\S]*BULKHEADS/)
      expect(text.stdout).toMatch(/SHADOW MODE[\s\S]*shadow\s+latency\/normal 1\b/)
      expect(text.stdout).toMatch(/SHADOW MODE[\s\S]*shadow\s+budget 2\b/)

      const bad = await run(process.execPath, [cli, 'set', `bulkhead.${shared}`, 'latency.minLimit=0']).catch((e) => e)
      expect(bad.code).toBe(2)
      expect(bad.stderr).toMatch(/`latency.minLimit`/)
    } finally {
      for (const token of held) bulkhead.release(token)
      bulkhead.close()
      budget.close()
    }
  })
})
