// Live rules across the host (docs/rules/live-rules.md): a rule changed in one process reaches every worker thread
// and process within a second, with no restart; `bulwark set` changes it from the command line and `bulwark top`
// shows it.
import { type ChildProcess, execFile, fork } from 'child_process'
import * as path from 'path'
import { promisify } from 'util'
import { afterEach, describe, expect, it } from 'vitest'

import {
  BbrLimiter,
  CircuitBreaker,
  defaultNamespace,
  KeyConcurrencyLimiter,
  SlidingWindowLimiter,
  SreBreaker,
  TokenBucket,
} from '../../dist/cjs'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const member = path.join(__dirname, '..', 'fixtures', 'rules-member.cjs')
const breakersMember = path.join(__dirname, '..', 'fixtures', 'rules-breakers-member.cjs')
const keysMember = path.join(__dirname, '..', 'fixtures', 'rules-key-member.cjs')
const cli = path.join(__dirname, '..', '..', 'dist', 'cjs', 'ops', 'cli', 'bulwark.js')
const run = promisify(execFile)

interface Report {
  member: string
  event: 'ready' | 'bucket' | 'limiter' | 'window' | 'sre' | 'circuit' | 'keys'
  at: number
}

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

/** `processes` member processes, each with a worker thread: every report they send lands in `reports`. */
function startMembers(processes: number, names: string[], reports: Report[], script = member): void {
  for (let i = 0; i < processes; i++) {
    const child = fork(script, names, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.on('message', (m) => reports.push(m as Report))
    children.push(child)
  }
}

describe('live rules across the host', () => {
  it('a TokenBucket rate and a BbrLimiter threshold changed in another process: every worker obeys within 1 s', async () => {
    const names = [uniqueName('rules-bucket'), uniqueName('rules-bbr')]
    const reports: Report[] = []
    startMembers(2, names, reports)
    const count = (event: Report['event']) => new Set(reports.filter((r) => r.event === event).map((r) => r.member))
    await waitFor(() => count('ready').size === 4, { what: '4 members (2 processes x 2 threads) under the old rule' })

    const bucket = new TokenBucket({ rate: 1, burst: 1, shared: names[0] })
    const limiter = new BbrLimiter({ shared: names[1] })
    try {
      bucket.configure({ rate: 1e6, burst: 1e6 })
      limiter.configure({ cpuThreshold: 950 })
      const changedAt = Date.now()
      await waitFor(() => count('bucket').size === 4 && count('limiter').size === 4, { what: 'every member obeys' })
      const delays = reports.filter((r) => r.event !== 'ready').map((r) => r.at - changedAt)
      expect(delays).toHaveLength(8)
      expect(Math.max(...delays)).toBeLessThanOrEqual(1000)
    } finally {
      bucket.close()
      limiter.close()
    }
  })

  it("a SlidingWindowLimiter limit and the breakers' thresholds changed in another process: every worker obeys within 1 s", async () => {
    const names = [uniqueName('rules-window'), uniqueName('rules-sre'), uniqueName('rules-circuit')]
    const reports: Report[] = []
    startMembers(2, names, reports, breakersMember)
    const count = (event: Report['event']) => new Set(reports.filter((r) => r.event === event).map((r) => r.member))
    await waitFor(() => count('ready').size === 4, { what: '4 members (2 processes x 2 threads) under the old rules' })

    const window = new SlidingWindowLimiter({ limit: 1, window: 60_000, shared: names[0] })
    const sre = new SreBreaker({ shared: names[1], minimumCalls: 10 })
    const circuit = new CircuitBreaker({ shared: names[2], failureRatio: 0.5, minimumCalls: 1000 })
    try {
      window.configure({ limit: 1e6 })
      sre.configure({ minimumCalls: 1e9 })
      circuit.configure({ minimumCalls: 5, failureRatio: 0.9 })
      const changedAt = Date.now()
      const events = ['window', 'sre', 'circuit'] as const
      await waitFor(() => events.every((e) => count(e).size === 4), { what: 'every member obeys' })
      const delays = reports.filter((r) => r.event !== 'ready').map((r) => r.at - changedAt)
      expect(delays).toHaveLength(12)
      expect(Math.max(...delays)).toBeLessThanOrEqual(1000)
    } finally {
      window.close()
      sre.close()
      circuit.close()
    }
  })

  it("a KeyConcurrencyLimiter's max changed in another process: every worker obeys within 1 s", async () => {
    const name = uniqueName('rules-keys')
    const reports: Report[] = []
    startMembers(2, [name], reports, keysMember)
    const count = (event: Report['event']) => new Set(reports.filter((r) => r.event === event).map((r) => r.member))
    await waitFor(() => count('ready').size === 4, { what: '4 members (2 processes x 2 threads) held to max 1' })

    const limiter = new KeyConcurrencyLimiter({ max: 1, shared: name })
    try {
      expect(limiter.configure({ max: 2 })).toEqual({ version: 1, values: { max: 2 } })
      const changedAt = Date.now()
      await waitFor(() => count('keys').size === 4, { what: 'every member obeys max 2' })
      const delays = reports.filter((r) => r.event === 'keys').map((r) => r.at - changedAt)
      expect(delays).toHaveLength(4)
      expect(Math.max(...delays)).toBeLessThanOrEqual(1000)
      expect(limiter.max).toBe(2)
    } finally {
      limiter.close()
    }
  })

  it('bulwark set changes a rule from the command line, bulwark top shows its version, a bad rule is refused', async () => {
    const shared = uniqueName('rules-cli')
    const bucket = new TokenBucket({ rate: 10, shared })
    try {
      const set = await run(process.execPath, [cli, 'set', shared, 'rate=250', 'burst=50'])
      // The region's full name carries its application namespace (docs/guide/trust.md).
      expect(set.stdout).toBe(`token-bucket.${defaultNamespace()}.${shared}: rule version 1: rate=250 burst=50\n`)
      expect(bucket.stats()).toMatchObject({ rate: 250, burst: 50, rules: { version: 1 } })

      const bad = await run(process.execPath, [cli, 'set', `token-bucket.${shared}`, 'rate=-5']).catch((e) => e)
      expect(bad.code).toBe(2)
      expect(bad.stderr).toMatch(/option `rate` must be .*-5/)
      expect(bucket.stats().rate).toBe(250)

      const top = await run(process.execPath, [cli, 'top', shared, '--once', '--json', '--interval', '0.05'])
      const frame = JSON.parse(top.stdout.trim().split('\n').pop() as string)
      expect(frame.regions[0].view).toMatchObject({ rate: 250, burst: 50, rules: { version: 1 } })
      const text = await run(process.execPath, [cli, 'top', shared, '--once', '--interval', '0.05'])
      expect(text.stdout).toMatch(/RULES[\s\S]*rate=250 burst=50/)
    } finally {
      bucket.close()
    }
  })

  // Issue 32, item 9: a bare shared name matched in every namespace, so `bulwark set api` changed another
  // application's limiter when this one had none of that name.
  it("bulwark set with a bare shared name never changes another application's component", async () => {
    const shared = uniqueName('rules-ns')
    const theirs = new TokenBucket({ rate: 10, shared, namespace: 'another-app' })
    try {
      for (const name of [shared, `token-bucket.${shared}`]) {
        const refused = await run(process.execPath, [cli, 'set', name, 'rate=99']).catch((e) => e)
        expect(refused.code).toBe(2) // before: 0, and their rate was 99
        expect(refused.stderr).toContain(`token-bucket.another-app.${shared}`) // named, to be named in full
      }
      expect(theirs.stats().rate).toBe(10)
      const named = await run(process.execPath, [cli, 'set', `another-app/${shared}`, 'rate=20'])
      expect(named.stdout).toBe(`token-bucket.another-app.${shared}: rule version 1: rate=20 burst=10\n`)
      expect(theirs.stats().rate).toBe(20)
    } finally {
      theirs.close()
    }
  })

  it("bulwark set changes a KeyConcurrencyLimiter's max; bulwark top shows it and its table", async () => {
    const shared = uniqueName('rules-keys-cli')
    const limiter = new KeyConcurrencyLimiter({ max: 2, shared })
    try {
      limiter.tryAcquire('acme')
      limiter.tryAcquire('acme')
      expect(limiter.tryAcquire('acme')).toBeLessThan(0)
      const set = await run(process.execPath, [cli, 'set', shared, 'max=3'])
      expect(set.stdout).toBe(`key-concurrency-limiter.${defaultNamespace()}.${shared}: rule version 1: max=3\n`)
      expect(limiter.stats()).toMatchObject({ max: 3, rules: { version: 1, values: { max: 3 } } })
      expect(limiter.tryAcquire('acme')).toBeGreaterThanOrEqual(0)

      const bad = await run(process.execPath, [cli, 'set', shared, 'max=0']).catch((e) => e)
      expect(bad.code).toBe(2)
      expect(bad.stderr).toMatch(/option `max` must be .*0/)
      expect(limiter.max).toBe(3)

      const top = await run(process.execPath, [cli, 'top', `${shared}*`, '--once', '--json', '--interval', '0.05'])
      const frame = JSON.parse(top.stdout.trim().split('\n').pop() as string)
      expect(frame.regions).toHaveLength(1) // every key in one table: no region per key
      expect(frame.regions[0].view).toMatchObject({
        type: 'keyed-table',
        component: 'KeyConcurrencyLimiter',
        size: 1,
        capacity: 20_000,
        rules: { version: 1, values: { max: 3 } },
      })
      const text = await run(process.execPath, [cli, 'top', `${shared}*`, '--once', '--interval', '0.05'])
      expect(text.stdout).toMatch(/KEYED TABLES[\s\S]*KeyConcurrencyLimiter +1 +1 \/ 20,000[\s\S]*RULES[\s\S]*max=3/)
    } finally {
      limiter.close()
    }
  })
})
