// A shared HeavyKeeper across real processes and worker threads: one sketch, one host-wide top-k.
import { type ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { Worker } from 'worker_threads'
import { afterEach, describe, expect, it } from 'vitest'

import { HeavyKeeper, RegionMismatchError } from '../../dist/cjs'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const fixture = path.join(__dirname, '..', 'fixtures', 'hotkey-member.cjs')
type Reply = unknown

interface Member {
  call(message: object): Promise<Reply>
  kill(): Promise<void>
}

const children: ChildProcess[] = []
const workers: Worker[] = []
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL')
  await Promise.all(workers.splice(0).map((w) => w.terminate()))
})

// Replies come back in order, one per message.
function queue(on: (fn: (m: Reply) => void) => void) {
  const waiting: Array<(m: Reply) => void> = []
  on((m) => waiting.shift()?.(m))
  return (send: () => void) =>
    new Promise<Reply>((resolve) => {
      waiting.push(resolve)
      send()
    })
}

async function processMember(options: object): Promise<Member> {
  const child = fork(fixture, [JSON.stringify(options)], { stdio: 'inherit' })
  children.push(child)
  const next = queue((fn) => child.on('message', fn))
  await next(() => undefined) // { member: 'ready' }
  return {
    call: (message) => next(() => child.send(message)),
    kill: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGKILL')
      }),
  }
}

async function threadMember(options: object): Promise<Member> {
  const worker = new Worker(fixture, { workerData: { role: 'hotkey-member', options } })
  workers.push(worker)
  const next = queue((fn) => worker.on('message', fn))
  await next(() => undefined)
  return {
    call: (message) => next(() => worker.postMessage(message)),
    kill: () => worker.terminate().then(() => undefined),
  }
}

const descending = (prefix: string, n: number, base: number) =>
  Array.from({ length: n }, (_, i) => [`${prefix}-${i}`, base - i * 10] as [string, number])

describe('shared HeavyKeeper across processes and threads', () => {
  it('two processes add disjoint streams; a third lists the host top-k; fading and a dead member reach it', async () => {
    const options = { k: 10, width: 1 << 16, depth: 4, shared: uniqueName('hk'), seed: 1 }
    const [one, two, three] = await Promise.all([
      processMember(options),
      processMember(options),
      processMember(options),
    ])
    const adds1 = descending('one', 20, 1000) // 1000, 990, ...
    const adds2 = descending('two', 20, 995) // 995, 985, ...
    await Promise.all([one.call({ op: 'add', adds: adds1 }), two.call({ op: 'add', adds: adds2 })])

    const expected = [...adds1, ...adds2].sort((a, b) => b[1] - a[1]).slice(0, 10)
    expect(await three.call({ op: 'list' })).toEqual(expected.map(([key, count]) => ({ key, count })))
    const sum = (adds: [string, number][]) => adds.reduce((s, [, n]) => s + n, 0)
    expect(await three.call({ op: 'total' })).toBe(sum(adds1) + sum(adds2))

    await one.call({ op: 'fading' }) // host-wide: the other members halve their heaps when they next look
    expect(await three.call({ op: 'list' })).toEqual(
      expected.map(([key, count]) => ({ key, count: Math.floor(count / 2) })),
    )
    expect(await two.call({ op: 'count', key: 'two-0' })).toBe(497)

    // A member that dies takes its heap with it (its published keys are dropped when it is reaped).
    await one.kill()
    let listed: Array<{ key: string }> = []
    await waitFor(async () => {
      listed = (await three.call({ op: 'list' })) as Array<{ key: string }>
      return listed.length > 0 && listed.every((item) => item.key.startsWith('two-'))
    })
    expect(listed.map((item) => item.key)).toEqual(adds2.slice(0, 10).map(([key]) => key))
  })

  it('two worker threads adding the same keys concurrently lose no update (CAS per bucket)', async () => {
    const options = { k: 50, width: 1 << 16, depth: 4, shared: uniqueName('hk-threads'), seed: 2 }
    const keys = Array.from({ length: 50 }, (_, i) => `key-${i}`)
    const members = await Promise.all([threadMember(options), threadMember(options)])
    const ready = uniqueName('hk-start')
    await Promise.all(members.map((m) => m.call({ op: 'spin', keys, rounds: 20_000, writers: 2, ready })))
    const observer = new HeavyKeeper(options)
    for (const key of keys) expect(observer.count(key)).toBe(40_000)
    expect(observer.total).toBe(2 * 50 * 20_000)
    expect(new Set(observer.list().map((item) => item.count))).toEqual(new Set([40_000]))
    observer.close()
  })

  it('publishes long keys as their first bytes, marked truncated', async () => {
    const options = { k: 5, width: 4096, shared: uniqueName('hk-long'), seed: 3 }
    const long = 'x'.repeat(50) + 'y'.repeat(150)
    const member = await processMember(options)
    await member.call({
      op: 'add',
      adds: [
        [long, 7],
        ['short', 3],
      ],
    })
    const observer = new HeavyKeeper(options)
    expect(observer.list()).toEqual([
      { key: long.slice(0, 96), count: 7, truncated: true },
      { key: 'short', count: 3 },
    ])
    observer.add(long, 1) // the observer now holds the key too, in the same bounded form: one entry, the higher count
    expect(observer.list()).toEqual([
      { key: long.slice(0, 96), count: 8, truncated: true },
      { key: 'short', count: 3 },
    ])
    observer.close()
  })

  it('fadingOnce fades the host once per epoch, whichever member asks first', async () => {
    const options = { k: 5, width: 4096, shared: uniqueName('hk-epoch'), seed: 4 }
    const [a, b] = await Promise.all([processMember(options), processMember(options)])
    await a.call({ op: 'add', adds: [['key', 64]] })
    const results = await Promise.all([a.call({ op: 'fadingOnce', epoch: 7 }), b.call({ op: 'fadingOnce', epoch: 7 })])
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await b.call({ op: 'fadingOnce', epoch: 6 })).toBe(false)
    expect(await b.call({ op: 'count', key: 'key' })).toBe(32)
    expect(await b.call({ op: 'fadingOnce', epoch: 8 })).toBe(true)
    expect(await a.call({ op: 'list' })).toEqual([{ key: 'key', count: 16 }])
  })

  it('members must agree on k, width, depth and decay', () => {
    const shared = uniqueName('hk-mismatch')
    const first = new HeavyKeeper({ k: 5, width: 1024, shared })
    expect(() => new HeavyKeeper({ k: 6, width: 1024, shared })).toThrow(RegionMismatchError)
    expect(() => new HeavyKeeper({ k: 5, width: 1024, decay: 0.9, shared })).toThrow(RegionMismatchError)
    const same = new HeavyKeeper({ k: 5, width: 1024, minCount: 3, shared }) // minCount is each member's own
    same.add('a', 2)
    expect(first.count('a')).toBe(2)
    first.close()
    same.close()
  })
})
