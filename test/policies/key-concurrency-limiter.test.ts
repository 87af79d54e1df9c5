// Per-key concurrency (docs/rules/key-concurrency.md): at most `max` requests in flight per key, with bounded memory
// for keys that come from requests, and host-wide when shared: worker threads and processes count against one limit,
// and a process killed while holding slots does not keep them.
import { type ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import * as http from 'http'
import type { AddressInfo } from 'net'

import { InvalidOptionError, isOverloadError, KeyConcurrencyLimiter, Shed } from '../../lib/index'
import { httpGuard } from '../../lib/entries/http'
import { KeyConcurrencyLimiter as BuiltLimiter } from '../../dist/cjs'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const memberScript = path.join(__dirname, '..', 'fixtures', 'key-concurrency-member.cjs')

describe('KeyConcurrencyLimiter', () => {
  it('admits at most max per key; each key has its own; release gives a slot back, exactly once', () => {
    const limiter = new KeyConcurrencyLimiter({ max: 2 })
    const a1 = limiter.tryAcquire('a')
    const a2 = limiter.tryAcquire('a')
    expect(a1).toBeGreaterThanOrEqual(0)
    expect(a2).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire('a')).toBe(Shed.keyConcurrency)
    const b = limiter.tryAcquire('b')
    expect(b).toBeGreaterThanOrEqual(0)
    expect(limiter.inFlight('a')).toBe(2)
    limiter.release(a1)
    limiter.release(a1) // a second release of the same token: ignored, counted
    limiter.release(-5)
    expect(limiter.inFlight('a')).toBe(1)
    const a3 = limiter.tryAcquire('a')
    expect(a3).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire('a')).toBe(Shed.keyConcurrency)
    expect(limiter.tryAcquire(42 as never)).toBe(Shed.keyConcurrency)
    expect(limiter.stats()).toMatchObject({
      max: 2,
      inFlight: 3,
      admitted: 4,
      shed: 3,
      invalidArguments: 1,
      invalidReleases: 2,
    })
    for (const t of [a2, a3, b]) limiter.release(t)
    expect(limiter.stats().inFlight).toBe(0)
    expect(limiter.inFlight('a')).toBe(0)
    limiter.close()
  })

  it('max is a live rule: configure changes it for the next request, a bad rule is refused whole', () => {
    const limiter = new KeyConcurrencyLimiter({ max: 2 })
    const changes: number[] = []
    limiter.onRuleChange((rule) => changes.push(rule.values.max))
    const held = [limiter.tryAcquire('a'), limiter.tryAcquire('a')]
    expect(limiter.tryAcquire('a')).toBe(Shed.keyConcurrency)
    expect(limiter.configure({ max: 3 })).toEqual({ version: 1, values: { max: 3 } })
    const third = limiter.tryAcquire('a')
    expect(third).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire('a')).toBe(Shed.keyConcurrency)
    // Lowered under what is in flight: nothing is taken back, the key admits again once it is under the new max.
    limiter.configure({ max: 1 })
    limiter.release(third)
    limiter.release(held[0])
    expect(limiter.tryAcquire('a')).toBe(Shed.keyConcurrency)
    limiter.release(held[1])
    expect(limiter.tryAcquire('a')).toBeGreaterThanOrEqual(0)
    for (const bad of [0, 1.5, -1, NaN]) expect(() => limiter.configure({ max: bad })).toThrow(InvalidOptionError)
    expect(() => limiter.configure({ maxKeys: 5 } as never)).toThrow(/`maxKeys`.*field that changes at run time/)
    expect(limiter.stats()).toMatchObject({ max: 1, rules: { version: 2, values: { max: 1 } } })
    expect(changes).toEqual([3, 1])
    limiter.close()
  })

  it('refuses bad options with a typed error naming the field', () => {
    expect(() => new KeyConcurrencyLimiter({ max: 0 })).toThrow(/`max`.*0/)
    expect(() => new KeyConcurrencyLimiter({ max: 1.5 })).toThrow(/`max`/)
    expect(() => new KeyConcurrencyLimiter({ max: 2, maxKeys: -1 })).toThrow(/`maxKeys`/)
    expect(() => new KeyConcurrencyLimiter({} as never)).toThrow(/`max`/)
    const handler = (_req: unknown, res: http.ServerResponse) => res.end()
    expect(() => httpGuard(handler, { keyConcurrency: { max: 2 } as never })).toThrow(/`keyConcurrency.key`/)
    const key = () => 'k'
    expect(() => httpGuard(handler, { keyConcurrency: { key } })).toThrow(/`keyConcurrency`.*either/)
    const both = { max: 2, limiter: new KeyConcurrencyLimiter({ max: 2 }), key }
    expect(() => httpGuard(handler, { keyConcurrency: both })).toThrow(/`keyConcurrency`/)
    both.limiter.close()
  })

  it('execute holds a slot while fn runs and gives it back however fn ends', async () => {
    const limiter = new KeyConcurrencyLimiter({ max: 1 })
    let finish: (v: string) => void = () => undefined
    const running = limiter.execute(() => new Promise<string>((r) => (finish = r)), { key: 'k' })
    const refused = await limiter.execute(async () => 'never', { key: 'k' }).catch((e) => e)
    expect(isOverloadError(refused) && refused.reason).toBe('key-concurrency')
    finish('ok')
    expect(await running).toBe('ok')
    const failed = await limiter.execute(() => Promise.reject(new Error('boom')), { key: 'k' }).catch((e) => e)
    expect(failed.message).toBe('boom')
    await expect(limiter.execute(() => 'sync', { key: 'k' })).resolves.toBe('sync')
    const aborted = AbortSignal.abort()
    await expect(limiter.execute(() => 'x', { key: 'k', signal: aborted })).rejects.toMatchObject({
      code: 'ERR_BULWARK_ABORTED',
    })
    expect(limiter.stats()).toMatchObject({ inFlight: 0, invalidReleases: 0, admitted: 3 })
    limiter.close()
  })

  it('memory is made once from maxKeys: keys at rest give up their slots; a table full of busy keys sends new keys to the overflow', () => {
    const clock = new ManualClock(0)
    // maxKeys 4: one bucket of 8 slots, whatever the keys; the overflow is 1 key's worth, 1 request in flight.
    const limiter = new KeyConcurrencyLimiter({ max: 1, maxKeys: 4, now: clock.now })
    let largest = 0 // the most keys held, seen every 1000 keys
    for (let i = 0; i < 10_000; i++) {
      const t = limiter.tryAcquire(`quiet-${i}`)
      expect(t).toBeGreaterThanOrEqual(0)
      limiter.release(t)
      if (i % 1000 === 0) largest = Math.max(largest, limiter.size)
    }
    expect(largest).toBeLessThanOrEqual(8)
    expect(limiter.stats()).toMatchObject({ size: 8, capacity: 8, created: 8, evicted: 10_000 - 8 })
    const busy = Array.from({ length: 8 }, (_, k) => limiter.tryAcquire(`b${k}`))
    expect(busy.every((t) => t >= 0)).toBe(true)
    // Every slot holds a key with a request in flight: a new key is not refused outright, it takes the overflow.
    const newcomer = limiter.tryAcquire('newcomer')
    expect(newcomer).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire('second-newcomer')).toBe(Shed.keyConcurrency) // the overflow is full
    expect(limiter.tryAcquire('b1')).toBe(Shed.keyConcurrency) // still at its own limit: no fresh start
    limiter.release(busy[1])
    expect(limiter.tryAcquire('third-newcomer')).toBeGreaterThanOrEqual(0) // b1 at rest now: its slot goes
    // A megabyte key costs no hash and no slot: it counts on the overflow, full until the newcomer is done.
    const huge = 'x'.repeat(1 << 20)
    expect(limiter.tryAcquire(huge)).toBe(Shed.keyConcurrency)
    limiter.release(newcomer)
    expect(limiter.tryAcquire(huge)).toBeGreaterThanOrEqual(0)
    expect(limiter.stats()).toMatchObject({ overflowInFlight: 1, overflowMax: 1, refused: 2 })
    limiter.close()
  })

  it('a key whose fingerprint collides with another shares its count, and no other key is touched', () => {
    const fingerprint = (key: string, out: Int32Array) => {
      const k = key === 'mallory' ? 'alice' : key
      out[0] = k.length * 7919 + k.charCodeAt(0)
      out[1] = k.charCodeAt(k.length - 1) * 104729
    }
    const limiter = new KeyConcurrencyLimiter({ max: 2, fingerprint })
    expect(limiter.tryAcquire('alice')).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire('mallory')).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire('alice')).toBe(Shed.keyConcurrency)
    expect(limiter.tryAcquire('bob')).toBeGreaterThanOrEqual(0)
    expect(limiter.inFlight('alice')).toBe(2)
    limiter.close()
  })
})

describe('KeyConcurrencyLimiter shared across the host', () => {
  const children: ChildProcess[] = []
  const workers: Worker[] = []
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    await Promise.all(workers.splice(0).map((w) => w.terminate()))
  })

  type Reply = { ready?: true; taken?: number; released?: true }
  /** Sends `m` to a member and resolves with its next reply. */
  function ask(member: ChildProcess | Worker, m: object): Promise<Reply> {
    return new Promise((resolve) => {
      member.once('message', resolve)
      if (member instanceof Worker) member.postMessage(m)
      else member.send(m)
    })
  }
  function started(member: ChildProcess | Worker): Promise<Reply> {
    return new Promise((resolve) => member.once('message', resolve))
  }

  it('worker threads and another process share one limit per key, exactly', async () => {
    const shared = uniqueName('keyconc')
    const max = 5
    const child = fork(memberScript, [shared, String(max)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    children.push(child)
    const threads = [0, 1].map(() => new Worker(memberScript, { workerData: [shared, String(max)] }))
    workers.push(...threads)
    await Promise.all([child, ...threads].map(started))
    const here = new BuiltLimiter({ shared, max })
    try {
      // Everyone asks for 4 slots of the same key at once: 16 asked, 5 admitted host-wide.
      const asked = [child, ...threads].map((m) => ask(m, { take: 'tenant-1', n: 4 }))
      const mine: number[] = []
      for (let i = 0; i < 4; i++) {
        const t = here.tryAcquire('tenant-1')
        if (t >= 0) mine.push(t)
      }
      const taken = (await Promise.all(asked)).map((r) => r.taken as number)
      expect(taken.reduce((a, b) => a + b, 0) + mine.length).toBe(max)
      expect(here.inFlight('tenant-1')).toBe(max)
      expect(here.tryAcquire('tenant-1')).toBe(Shed.keyConcurrency)
      expect(here.tryAcquire('tenant-2')).toBeGreaterThanOrEqual(0) // another key has its own limit
      // The others give theirs back: this process can take what they held.
      await Promise.all([child, ...threads].map((m) => ask(m, { release: true })))
      expect(here.inFlight('tenant-1')).toBe(mine.length)
      let more = 0
      while (here.tryAcquire('tenant-1') >= 0) more++
      expect(mine.length + more).toBe(max)
    } finally {
      here.close()
    }
  })

  it('slots held by a process that is killed come back without anyone releasing them', async () => {
    const shared = uniqueName('keyconc-dead')
    const child = fork(memberScript, [shared, '3'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    children.push(child)
    await started(child)
    const here = new BuiltLimiter({ shared, max: 3 })
    try {
      expect((await ask(child, { take: 'k', n: 3 })).taken).toBe(3)
      expect(here.tryAcquire('k')).toBe(Shed.keyConcurrency)
      child.kill('SIGKILL')
      // The region reaps a dead member's lane within a lease (under a second, docs/rules/key-concurrency.md).
      await waitFor(() => here.inFlight('k') === 0, { what: "the dead process's slots to be reclaimed", timeout: 5000 })
      const tokens = [0, 1, 2].map(() => here.tryAcquire('k'))
      expect(tokens.every((t) => t >= 0)).toBe(true)
      expect(here.tryAcquire('k')).toBe(Shed.keyConcurrency)
    } finally {
      here.close()
    }
  })

  it('an inbound guard with a shared limiter answers 429 while another process holds the key, 200 once it died', async () => {
    const shared = uniqueName('keyconc-guard')
    const child = fork(memberScript, [shared, '2'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    children.push(child)
    await started(child)
    const limiter = new KeyConcurrencyLimiter({ shared, max: 2 })
    const guarded = httpGuard((_req, res) => res.end('ok'), {
      limiter: false,
      keyConcurrency: { limiter, key: (req) => String(req.headers['x-tenant']) },
    })
    const server = http.createServer(guarded)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as AddressInfo).port
    const status = () =>
      new Promise<number>((resolve, reject) =>
        http
          .get({ port, host: '127.0.0.1', headers: { 'x-tenant': 'acme' }, agent: false }, (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          })
          .on('error', reject),
      )
    try {
      expect((await ask(child, { take: 'acme', n: 2 })).taken).toBe(2)
      expect(await status()).toBe(429)
      child.kill('SIGKILL')
      await waitFor(async () => (await status()) === 200, { what: 'the dead holder to lose its slots', timeout: 5000 })
      await waitFor(() => limiter.inFlight('acme') === 0, { what: 'the answered request to give its slot back' })
      expect(guarded.guard.stats().shedKeyConcurrency).toBeGreaterThanOrEqual(1)
    } finally {
      await new Promise((r) => server.close(r))
      limiter.close()
    }
  })
})
