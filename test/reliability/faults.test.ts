// Shared state under faults: a cluster worker SIGKILLed mid-request, a region of another layout version, corrupted
// and truncated region files, and many processes attaching and detaching while others use the region.
import { type ChildProcess, fork } from 'child_process'
import * as fs from 'fs'
import * as http from 'http'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { BbrLimiter, RegionCorruptError, RegionMismatchError, defaultNamespace, loadInfo } from '../../dist/cjs'
import { regionLocation } from '../../lib/foundation/regions/regions'
import { reaperPasses } from '../helpers/reaper-passes'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const fixtures = path.join(__dirname, 'fixtures')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const regionLayout = require('../../dist-internal/foundation/native/load-native').native.layout.region
// The file of the BbrLimiter region `shared` of this application (its namespace: the fixtures share the root).
const bbrFile = (shared: string) => regionLocation(`bbr.${defaultNamespace()}.${shared}`)
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

function spawnFixture(file: string, args: string[]): ChildProcess {
  const child = fork(path.join(fixtures, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  children.push(child)
  return child
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T))
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)))
  })
}

function get(port: number, route: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: route, agent: false }, (res) => {
        let body = ''
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body ? JSON.parse(body) : undefined }))
      })
      .on('error', reject)
  })
}

/** A request that the server admits and never answers: in flight until its process dies. */
function hang(port: number): void {
  http.get({ host: '127.0.0.1', port, path: '/hang', agent: false }).on('error', () => undefined)
}

describe('a node:cluster worker killed mid-request', () => {
  it('its requests in flight are given back by the next reaper pass; the other worker keeps serving with its counts intact', async () => {
    const name = uniqueName('cluster')
    const primary = spawnFixture('cluster-member.cjs', [name])
    const workers: Array<{ id: number; pid: number; port: number }> = []
    await new Promise<void>((resolve) =>
      primary.on('message', (m: any) => (workers.push(m), workers.length === 2 && resolve())),
    )
    const [a, b] = workers
    for (let i = 0; i < 20; i++) hang(a.port)
    for (let i = 0; i < 5; i++) hang(b.port)
    await waitFor(async () => (await get(b.port, '/stats')).body.inFlight === 25, { what: '25 in flight' })
    for (let i = 0; i < 10; i++) expect((await get(b.port, '/ok')).status).toBe(200)
    const before = (await get(b.port, '/stats')).body

    const exited = new Promise((resolve) => primary.on('message', (m: any) => m.exited === a.pid && resolve(m)))
    process.kill(a.pid, 'SIGKILL')
    // While the dead worker's requests are reclaimed, the survivor answers every request.
    const during: Array<Promise<{ status: number }>> = []
    const traffic = setInterval(() => during.push(get(b.port, '/ok')), 5)
    await exited
    // The survivor's sampler reaps dead members right after each CPU sample (every 500 ms): two more samples
    // mean a whole reaper pass that began after the death.
    const deadAt = (await get(b.port, '/stats')).body.samples
    const after = await waitFor(
      async () => {
        const stats = await get(b.port, '/stats')
        return stats.body.samples >= deadAt + 2 && stats
      },
      { what: 'two sampler ticks of the survivor' },
    )
    clearInterval(traffic)
    const answers = await Promise.all(during)
    console.log(`${answers.length} requests served while the dead worker's share was reclaimed`)

    expect(after.body.inFlight).toBe(5)
    expect(answers.every((r) => r.status === 200)).toBe(true)
    const final = (await get(b.port, '/stats')).body
    // The survivor's own counts: every request it answered, no more, no less; its 5 hanging ones still in flight.
    expect(final.answered).toBe(before.answered + answers.length)
    expect(final.breaker.calls).toBe(before.breaker.calls + answers.length)
    expect(final.breaker.state).toBe('closed')
    expect(final.inFlight).toBe(5)
    expect(after.body.pid).toBe(b.pid)
    primary.send('stop')
    await new Promise((r) => primary.once('exit', r))
  })
})

describe('regions that are not what they should be', () => {
  it('another layout version held by a live process: RegionMismatchError that says so; the holder keeps working', async () => {
    const name = uniqueName('version')
    const holder = spawnFixture(path.join('..', '..', 'fixtures', 'bbr-member.cjs'), [name])
    await nextMessage(holder)
    const file = bbrFile(name)
    const fd = fs.openSync(file, 'r+')
    const version = Buffer.alloc(4)
    version.writeUInt32LE(regionLayout.version + 1)
    fs.writeSync(fd, version, 0, 4, 4) // what a newer bulwark's processes would have written
    fs.closeSync(fd)
    const options = { shared: name, signal: () => 0, queueDelay: false as const }
    expect(() => new BbrLimiter(options)).toThrow(RegionMismatchError)
    expect(() => new BbrLimiter(options)).toThrow(
      new RegExp(`layout version ${regionLayout.version + 1}.*rolling deploy`),
    )
    holder.send({ op: 'hold', n: 3 })
    expect(await nextMessage<{ held: number; shed: number }>(holder)).toEqual({ held: 3, shed: 0 })
    // Once that version's processes are gone, the region is rebuilt for this one.
    holder.kill('SIGKILL')
    await new Promise((r) => holder.once('exit', r))
    const limiter = new BbrLimiter(options)
    expect(limiter.inFlight).toBe(0)
    limiter.close()
    expect(fs.existsSync(file)).toBe(false)
  })

  it('a truncated file left by a dead process: RegionCorruptError at attach for every size that cuts the header', () => {
    const name = uniqueName('truncated')
    const limiter = new BbrLimiter({ shared: name, queueDelay: false })
    const file = bbrFile(name)
    const whole = fs.readFileSync(file)
    limiter.close()
    for (const size of [1, 7, 100, regionLayout.headerSize - 1, regionLayout.headerSize + 8, whole.length - 64]) {
      fs.writeFileSync(file, whole.subarray(0, size), { mode: 0o600 })
      let error: unknown
      try {
        new BbrLimiter({ shared: name, queueDelay: false }).close()
      } catch (e) {
        error = e
      }
      expect(error, `size ${size}`).toBeInstanceOf(RegionCorruptError)
      expect((error as Error).message).toMatch(/truncated|corrupted/)
      expect((error as Error).message).toContain(file)
    }
    fs.unlinkSync(file)
  })

  it('a header overwritten while a member is attached: new attachers get RegionCorruptError, the member and the reaper carry on', async () => {
    const name = uniqueName('overwritten')
    const limiter = new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })
    const file = bbrFile(name)
    const fd = fs.openSync(file, 'r+')
    const original = Buffer.alloc(regionLayout.headerSize)
    fs.readSync(fd, original, 0, original.length, 0)
    const garbage = Buffer.alloc(64, 0xa5)
    fs.writeSync(fd, garbage, 0, 64, 0) // magic, version, size, state, capacity, high-water: all nonsense
    try {
      expect(() => new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })).toThrow(RegionCorruptError)
      // Three reaper passes of the sampler over the garbage header, while the member keeps deciding.
      const start = loadInfo().samples
      let attempts = 0
      let admitted = 0
      await waitFor(() => {
        attempts++
        const t = limiter.tryAcquire()
        if (t >= 0) {
          admitted++
          limiter.release(t)
        }
        return loadInfo().samples >= start + 4
      })
      expect(admitted).toBe(attempts)
      expect(limiter.stats().inFlight).toBe(0)
    } finally {
      fs.writeSync(fd, original, 0, original.length, 0)
      fs.closeSync(fd)
      limiter.close()
    }
  })
})

describe('many processes attaching and detaching while others use the region', () => {
  it('no add is lost, gauges are given back, and the member table ends with only the ones still attached', async () => {
    const name = uniqueName('attach-churn')
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { attach } = require('./fixtures/attach-churn.cjs')
    const observer = attach(name)
    const users = [
      spawnFixture('attach-churn.cjs', [name, 'user', '0']),
      spawnFixture('attach-churn.cjs', [name, 'user', '0']),
    ]
    await Promise.all(users.map((u) => nextMessage(u)))
    const churners = Array.from({ length: 6 }, () => spawnFixture('attach-churn.cjs', [name, 'churn', '150']))
    const churned = await Promise.all(churners.map((c) => nextMessage<{ added: number }>(c)))
    await Promise.all(churners.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)))
    const used = await Promise.all(
      users.map((u) => (u.send('stop'), nextMessage<{ added: number; members: number }>(u))),
    )
    await Promise.all(users.map((u) => (u.exitCode === null ? new Promise((r) => u.once('exit', r)) : undefined)))
    await reaperPasses(loadInfo) // for any member that exited without detaching
    const added = [...churned, ...used].reduce((sum, r) => sum + r.added, 0)
    expect(churned.every((c) => c.added === 150)).toBe(true)
    expect(observer.atomic.load()).toBe(added)
    expect(observer.lane.total()).toBe(added)
    expect(observer.gauge.total()).toBe(0)
    expect(observer.region.members().map((m: { pid: number }) => m.pid)).toEqual([process.pid])
    observer.region.close()
    expect(fs.existsSync(`/dev/shm/bulwark.${name}`)).toBe(false)
  })
})
