// The `bulwark` command's own paths in this process (lib/ops/cli/main.ts): usage and exit codes, `bulwark set` on a
// component and a switchboard of this host, `bulwark top --once --json`, `bulwark gc`. The built command runs in
// child processes in test/top/top-cli.test.ts and test/fleet/fleet-host.test.ts.
import { afterEach, describe, expect, it } from 'vitest'

import { Switchboard } from '../../lib/components/switches/switchboard'
import { TokenBucket } from '../../lib/components/ratelimit/token-bucket'
import '../helpers/cleanup-regions'
import { bulwarkHere as bulwark } from '../helpers/cli-in-process'

const closing: Array<{ close(): void }> = []
afterEach(() => {
  for (const c of closing.splice(0)) c.close()
})

let namespaces = 0
const namespace = () => `cli${process.pid}n${++namespaces}`

describe('bulwark, in this process', () => {
  it('says how to use it, with exit code 2 when nothing or something unknown is asked', async () => {
    expect(await bulwark()).toMatchObject({ code: 2, out: expect.stringContaining('Commands:') })
    expect(await bulwark('help')).toMatchObject({ code: 0, out: expect.stringContaining('Commands:') })
    expect(await bulwark('frobnicate')).toMatchObject({
      code: 2,
      err: expect.stringContaining("unknown command 'frobnicate'"),
    })
    expect(await bulwark('top', '--help')).toMatchObject({ code: 0, out: expect.stringContaining('--interval') })
    expect(await bulwark('gc', '--help')).toMatchObject({ code: 0, out: expect.stringContaining('--all-users') })
    expect(await bulwark('set')).toMatchObject({ code: 2, out: expect.stringContaining('switches.<board>') })
    expect(await bulwark('top', '--interval', 'soon')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--interval'),
    })
    expect(await bulwark('gc', '--everything')).toMatchObject({ code: 2, err: expect.stringContaining('bulwark gc') })
  })

  it('sets a shared bucket’s rule and a switchboard’s switch for every process of the host', async () => {
    const ns = namespace()
    const bucket = new TokenBucket({ rate: 1, burst: 1, shared: 'gw', namespace: ns })
    const board = new Switchboard({ shared: 'api', namespace: ns })
    closing.push(bucket, board)

    expect((await bulwark('set', `${ns}/gw`, 'rate=77')).code).toBe(0)
    bucket.tryAcquire()
    expect(bucket.stats().rules.values.rate).toBe(77)
    expect(await bulwark('set', `${ns}/gw`, 'rate=-1')).toMatchObject({ code: 2, err: expect.stringContaining('rate') })

    expect((await bulwark('set', `switches.${ns}.api`, 'priority:low=shed')).code).toBe(0)
    board.refresh()
    expect(board.list().map(({ target, mode }) => ({ target, mode }))).toEqual([
      { target: 'priority:low', mode: 'shed' },
    ])
    expect((await bulwark('set', `switches.${ns}.api`)).out).toContain('priority:low')
    expect((await bulwark('set', `switches.${ns}.api`, 'priority:urgent=shed')).code).toBe(2)
  })

  it('shows a frame of the host’s regions as JSON, and collects what no process uses', async () => {
    const ns = namespace()
    const bucket = new TokenBucket({ rate: 5, burst: 5, shared: 'gw', namespace: ns })
    closing.push(bucket)
    const top = await bulwark('top', '--once', '--json', '--interval', '0.05', `token-bucket.${ns}.gw`)
    expect(top.code).toBe(0)
    const frame = JSON.parse(top.out.trim().split('\n')[0]) as { regions: Array<{ name: string }> }
    expect(frame.regions.map((r) => r.name)).toEqual(['gw']) // the one region named, by its shared name
    expect(await bulwark('gc', '--namespace', ns)).toMatchObject({ code: 0 })
    bucket.tryAcquire() // gc left the region a live process uses
    expect(bucket.stats().rules.values.rate).toBe(5)
  })
})
