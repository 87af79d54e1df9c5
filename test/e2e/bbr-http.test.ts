import { ChildProcess, spawn } from 'child_process'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { tooBusyToJudge, withTimerLag } from '../helpers/timer-lag'

// A real node:http server with a synchronous CPU-bound handler (2 ms), driven by an open-loop client in another
// process at 3x its measured capacity. In-flight stays near 0 (the handler never yields), so only the
// queueing-delay rule can protect it.
const fixtures = path.join(__dirname, '..', 'fixtures')
const servers: ChildProcess[] = []
afterAll(() => servers.forEach((s) => s.kill('SIGKILL')))

function startServer(protect: 'bbr' | 'none'): Promise<number> {
  const server = spawn(process.execPath, [path.join(fixtures, 'busy-http-server.cjs'), '2', protect], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  servers.push(server)
  return new Promise((resolve) => server.stdout!.once('data', (d) => resolve(Number(String(d).trim()))))
}

function client(port: number, rate: number, seconds: number, warmup: number): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [
      path.join(fixtures, 'open-loop-client.cjs'),
      String(port),
      String(rate),
      String(seconds),
      String(warmup),
    ])
    let out = ''
    c.stdout.on('data', (d) => (out += d))
    c.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited ${code}`))))
  })
}

describe('BbrLimiter in front of a synchronous handler at 3x capacity', () => {
  it('keeps admitted p99 latency bounded and sheds the rest fast; without it latency grows without bound', async (ctx) => {
    const [unprotected, protectedPort] = await Promise.all([startServer('none'), startServer('bbr')])
    const [{ before, after, rate, withBbr, without }, lag] = await withTimerLag(async () => {
      const before = (await client(unprotected, 0, 1, 0)).capacity
      const rate = Math.round(3 * before)
      const withBbr = await client(protectedPort, rate, 4, 1)
      // Measured again: what else runs on the machine may have taken some of it meanwhile.
      const after = (await client(unprotected, 0, 1, 0)).capacity
      const without = await client(unprotected, rate, 4, 1)
      return { before, after, rate, withBbr, without }
    })
    const capacity = Math.min(before, after)
    console.log(JSON.stringify({ before, after, rate, withBbr, without, lag }))

    // Whatever else the machine runs: the protected server sheds, the unprotected one never does.
    expect(withBbr.shed).toBeGreaterThan(0)
    expect(without.shed).toBe(0)
    const busy = tooBusyToJudge(lag, [before, after])
    // eslint-disable-next-line vitest/no-disabled-tests -- latency is not judged on a busy machine, and says why
    ctx.skip(busy !== undefined, busy)

    // Protected: admitted requests see a bounded delay, the rest get a fast 503, and real work still gets done. The
    // bound is about 110 times what a request costs the server as measured (250 ms, 25x the 10 ms target, when it
    // costs its nominal 2.2 ms), plus the scheduling delay the rest of the machine adds to the server and to the
    // client (about this process's timer lag each).
    const bound = Math.max(250, (110 * 1000) / capacity) + 2 * lag.p99
    expect(withBbr.p99).toBeLessThan(bound)
    expect(withBbr.shedP99).toBeLessThan(bound)
    expect(withBbr.shed).toBeGreaterThan(rate) // at 3x, most of the excess is shed
    expect(withBbr.ok / 3).toBeGreaterThan(0.5 * capacity) // goodput after warm-up, per second
    // Unprotected: the backlog grows for the whole run.
    expect(without.p99).toBeGreaterThan(1000)
    expect(without.p99).toBeGreaterThan(8 * withBbr.p99)
  }, 60_000)
})
