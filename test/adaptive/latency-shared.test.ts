import { type ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { BbrLimiter, Shed } from '../../dist/cjs'
import '../helpers/cleanup-regions'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'
import { type Admission, simulateUpstream, type UpstreamPhase } from './upstream-sim'

const overload: UpstreamPhase[] = [
  { rate: 200, seconds: 2, concurrency: 8, serviceMs: 20 },
  { rate: 1200, seconds: 8, concurrency: 8, serviceMs: 20 },
]
const options = { signal: () => 0, queueDelay: false as const }

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL')
})

/** Requests alternate between the members; each is released by the member that admitted it. */
function alternate(members: BbrLimiter[]): Admission {
  const n = members.length
  let next = 0
  return {
    // Tokens of different members may be equal: the member's index rides in the token given out.
    tryAcquire(priority) {
      const index = next++ % n
      const token = members[index].tryAcquire(priority)
      return token >= 0 ? token * n + index : token
    },
    release(token) {
      members[token % n].release(Math.floor(token / n))
    },
  }
}

describe('the latency rule shared by the host', () => {
  it('makes two members of one shared limiter decide exactly as one limiter would', () => {
    const soloClock = new ManualClock(1000)
    const solo = new BbrLimiter({ ...options, now: soloClock.now })
    const alone = simulateUpstream(solo, soloClock, overload)

    const clock = new ManualClock(1000)
    const name = uniqueName('latency-pair')
    const a = new BbrLimiter({ ...options, now: clock.now, shared: name })
    const b = new BbrLimiter({ ...options, now: clock.now, shared: name })
    const together = simulateUpstream(alternate([a, b]), clock, overload)

    expect(together.map((r) => r.shed)).toEqual(alone.map((r) => r.shed))
    expect(together.map((r) => r.completed)).toEqual(alone.map((r) => r.completed))
    expect(a.stats().latency).toEqual(solo.stats().latency)
    expect(b.stats().latency).toEqual(a.stats().latency)
    expect(a.stats().shedLatency).toBe(solo.stats().shedLatency)
    a.close()
    b.close()
  })

  it('agrees on one limit across processes, and sheds another process by the host total', async () => {
    const name = uniqueName('latency-host')
    const clock = new ManualClock(1000)
    const parent = new BbrLimiter({ ...options, now: clock.now, shared: name })
    const child = fork(path.join(__dirname, '..', 'fixtures', 'latency-member.cjs'), [name, String(clock.time)])
    children.push(child)
    await new Promise((resolve) => child.once('message', resolve))
    const ask = (command: object) =>
      new Promise<any>((resolve) => {
        child.once('message', resolve)
        child.send({ at: clock.time, ...command })
      })

    expect((await ask({ op: 'acquire', n: 4 })).held).toBe(4) // the child holds 4 requests through the run
    simulateUpstream(parent, clock, overload) // leaves its last requests in flight
    const own = parent.stats().latency
    expect(own?.shedding).toBe(true)
    const seen = await ask({ op: 'stats' })
    expect(seen.latency).toEqual(own)
    expect(seen.inFlight).toBe(parent.inFlight)
    expect(parent.inFlight).toBeGreaterThan(own?.limit as number) // the host is at its limit (child's 4 included)
    const { codes } = await ask({ op: 'acquire', n: 1 })
    expect(codes).toEqual([Shed.latency])
    expect(parent.stats().shedLatency).toBeGreaterThan(0)
    await ask({ op: 'release' })
    parent.close()
  })
})
