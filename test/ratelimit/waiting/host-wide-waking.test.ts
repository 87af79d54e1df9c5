import { ChildProcess, fork } from 'child_process'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { uniqueName } from '../../helpers/unique-name'

const member = path.join(__dirname, '..', '..', 'fixtures', 'waiting-member.cjs')
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

interface Reply {
  done: string
  ok?: boolean
  reason?: string
  ms?: number
}

function start(kind: string, shared: string): { ask(m: object, until: string): Promise<Reply> } {
  const child = fork(member, [kind, shared], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  children.push(child)
  const replies: Reply[] = []
  const waiting: Array<{ until: string; resolve: (r: Reply) => void }> = []
  child.on('message', (r: Reply) => {
    const i = waiting.findIndex((w) => w.until === r.done)
    if (i >= 0) waiting.splice(i, 1)[0].resolve(r)
    else replies.push(r)
  })
  const next = (until: string): Promise<Reply> => {
    const i = replies.findIndex((r) => r.done === until)
    if (i >= 0) return Promise.resolve(replies.splice(i, 1)[0])
    return new Promise((resolve) => waiting.push({ until, resolve }))
  }
  return {
    ask(m: object, until: string) {
      if (Object.keys(m).length > 0) child.send(m)
      return next(until)
    },
  }
}

// The refill is an hour away: only a give-back in the other process can serve the waiter, and it must, at once.
describe.each(['token-bucket', 'sliding-window'])('%s shared by two processes', (kind) => {
  it('a waiter in one process is woken by a give-back in another', async () => {
    const shared = uniqueName('wake')
    const holder = start(kind, shared)
    const waiter = start(kind, shared)
    await holder.ask({}, 'ready')
    await waiter.ask({}, 'ready')
    await holder.ask({ cmd: 'reserve', n: 10 }, 'reserve')
    await waiter.ask({ cmd: 'acquire', n: 6, maxWait: 60_000 }, 'waiting')
    await holder.ask({ cmd: 'cancel' }, 'cancel')
    const served = await waiter.ask({}, 'acquire')
    expect(served.ok).toBe(true)
    // Served by the give-back (polled every 10 ms), not by a refill an hour away or by maxWait.
    expect(served.ms).toBeLessThan(30_000)
    void holder.ask({ cmd: 'exit' }, 'exit')
    void waiter.ask({ cmd: 'exit' }, 'exit')
  })
})
