import { type ChildProcess, fork, spawnSync } from 'child_process'
import * as http from 'http'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import { get } from './inbound-scenarios'

const fixtures = path.join(__dirname, '..', 'fixtures')
const children: ChildProcess[] = []
afterAll(() => children.forEach((c) => c.kill('SIGKILL')))

function member(
  name: string,
  minInFlight: number,
): Promise<{ port: number; stats: () => Promise<any>; exit: () => void }> {
  const child = fork(path.join(fixtures, 'integration-http-member.cjs'), [name, String(minInFlight)])
  children.push(child)
  const ask = (m: string, field: string) =>
    new Promise<any>((resolve) => {
      const on = (reply: any) => {
        if (!(field in reply)) return
        child.off('message', on)
        resolve(reply[field])
      }
      child.on('message', on)
      if (m) child.send(m)
    })
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the member exited with ${code}`))),
  )
  return Promise.race([ask('', 'port'), exited]).then((port) => ({
    port,
    stats: () => ask('stats', 'stats'),
    exit: () => child.send('exit'),
  }))
}

type Member = Awaited<ReturnType<typeof member>>

/** The member's limiter stats once `condition` holds (requests reach the other process over real sockets). */
async function statsWhen(m: Member, condition: (stats: any) => boolean): Promise<any> {
  return waitFor(async () => {
    const stats = await m.stats()
    return condition(stats) && stats
  })
}

describe('inbound adapters across processes', () => {
  it('loading bulwark loads no framework', () => {
    const r = spawnSync(process.execPath, [path.join(fixtures, 'integration-imports.cjs')], { encoding: 'utf8' })
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual([])
  })

  it('two server processes share one in-flight count, and aborted requests give it back host-wide', async () => {
    const name = uniqueName('integration-http')
    const a = await member(name, 4)
    const b = await member(name, 4)
    const hanging = Array.from({ length: 5 }, () => {
      const req = http.get({ host: '127.0.0.1', port: a.port, path: '/hang', agent: false })
      req.on('error', () => undefined)
      return req
    })
    expect((await statsWhen(a, (s) => s.inFlight === 5)).inFlight).toBe(5) // 5 > minInFlight 4: the host is over its limit
    expect((await get(b.port)).status).toBe(503) // shed by the other process
    hanging.forEach((req) => req.destroy())
    expect((await statsWhen(b, (s) => s.inFlight === 0)).inFlight).toBe(0)
    expect((await get(b.port)).status).toBe(200)
    const after = await a.stats()
    expect(after.invalidReleases).toBe(0)
    a.exit()
    b.exit()
  })
})
