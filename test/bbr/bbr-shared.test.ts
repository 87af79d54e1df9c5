import { ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import { BbrLimiter, loadInfo } from '../../dist/cjs'
import { reaperPasses } from '../helpers/reaper-passes'
import { uniqueName } from '../helpers/unique-name'

const script = path.join(__dirname, '..', 'fixtures', 'bbr-member.cjs')
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL')
})

type Reply = Record<string, number>

async function spawnMember(name: string) {
  const child = fork(script, [name], { stdio: 'inherit' })
  children.push(child)
  await new Promise((resolve) => child.once('message', resolve))
  const ask = (command: object) =>
    new Promise<Reply>((resolve) => {
      child.once('message', (m) => resolve(m as Reply))
      child.send(command)
    })
  return { child, ask }
}

function startWorker(name: string) {
  const worker = new Worker(script, { workerData: { role: 'bbr-member', name } })
  const ask = (command: object) =>
    new Promise<Reply>((resolve) => {
      worker.once('message', (m) => resolve(m as Reply))
      worker.postMessage(command)
    })
  return { worker, ask }
}

describe('BbrLimiter shared by the host', () => {
  it('keeps one exact in-flight count across processes admitting and releasing concurrently', async () => {
    const name = uniqueName('bbr-exact')
    const observer = new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })
    const members = await Promise.all([0, 1, 2].map(() => spawnMember(name)))
    const replies = await Promise.all(
      members.map((m, i) => m.ask({ op: 'churn', iterations: 200_000, keep: 10 * (i + 1) })),
    )
    expect(replies.map((r) => r.held)).toEqual([10, 20, 30])
    expect(observer.inFlight).toBe(60)
    const stats = observer.stats()
    expect(stats.admitted).toBe(replies.reduce((sum, r) => sum + r.admitted, 0))
    expect(stats.admitted).toBeGreaterThanOrEqual(600_000)
    expect(stats.shed).toBe(0)
    observer.close()
  })

  it('sheds by the host total, not by its own share', async () => {
    const name = uniqueName('bbr-host')
    const saturated = new BbrLimiter({ shared: name, signal: () => 1000, minInFlight: 20, queueDelay: false })
    const [a, b] = await Promise.all([spawnMember(name), spawnMember(name)])
    await a.ask({ op: 'hold', n: 30 })
    await b.ask({ op: 'hold', n: 40 })
    expect(saturated.inFlight).toBe(70)
    expect(saturated.tryAcquire()).toBeLessThan(0) // 70 in flight on the host, over the floor of 20
    await a.ask({ op: 'release', n: 30 })
    await b.ask({ op: 'release', n: 25 })
    const token = saturated.tryAcquire() // 15 in flight now
    expect(token).toBeGreaterThanOrEqual(0)
    saturated.release(token)
    saturated.close()
  })

  it('reclaims the in-flight share of a SIGKILLed process at the next reaper pass (every 500 ms)', async () => {
    const name = uniqueName('bbr-dead')
    const observer = new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })
    const survivor = await spawnMember(name)
    const victim = await spawnMember(name)
    await survivor.ask({ op: 'hold', n: 5 })
    await victim.ask({ op: 'hold', n: 40 })
    const mine = observer.tryAcquire()
    expect(observer.inFlight).toBe(46)
    victim.child.kill('SIGKILL')
    await new Promise((resolve) => victim.child.once('exit', resolve))
    await reaperPasses(loadInfo)
    expect(observer.inFlight).toBe(6)
    // Nobody else was touched: the survivor still holds its 5, this thread its 1.
    expect((await survivor.ask({ op: 'stats' })).inFlight).toBe(6)
    observer.release(mine)
    expect(observer.inFlight).toBe(5)
    observer.close()
  })

  it('shares one count with worker_threads, and gives back what a terminated worker held', async () => {
    const name = uniqueName('bbr-threads')
    const observer = new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })
    const w1 = startWorker(name)
    const w2 = startWorker(name)
    await w1.ask({ op: 'hold', n: 10 })
    await w2.ask({ op: 'hold', n: 15 })
    expect(observer.inFlight).toBe(25)
    await w2.worker.terminate()
    expect(observer.inFlight).toBe(10)
    await w1.worker.terminate()
    expect(observer.inFlight).toBe(0)
    observer.close()
  })
})
