// The fleet's commands in this process (lib/ops/cli/main.ts): `bulwark set --source` and `bulwark rules` against a
// file source, what they write there, what they print and their exit codes. fleet-host.test.ts runs the built
// command against Redis and etcd; this covers the commands' own paths: history, rollback, canaries, refusals.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import type { RuleDocument } from '../../lib/ops/fleet/rule-document'
import { bulwarkHere as bulwark } from '../helpers/cli-in-process'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-fleet-cli-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
/** A new file source: its URL and a reader of the document it holds. */
function fileSource() {
  const file = path.join(dir, `rules-${++files}.json`)
  return { url: `file://${file}`, doc: () => JSON.parse(fs.readFileSync(file, 'utf8')) as RuleDocument }
}

describe('bulwark set --source and bulwark rules, on a file source', () => {
  it('writes versions with author and message, lists them, and rolls back', async () => {
    const { url, doc } = fileSource()
    const src = ['--source', url, '--namespace', 'shop', '--author', 'alice']
    expect(await bulwark('set', ...src, '-m', 'first', 'token-bucket.gw', 'rate=500', 'burst=50')).toMatchObject({
      code: 0,
      out: expect.stringContaining('version 1 written'),
    })
    expect((await bulwark('set', ...src, 'switches.api', 'priority:low=shed')).code).toBe(0)
    expect((await bulwark('set', ...src, 'bbr.api', 'shadow=on')).code).toBe(0)
    expect(doc()).toMatchObject({
      version: 3,
      components: { 'token-bucket.gw': { rules: { rate: 500, burst: 50 } }, 'bbr.api': { shadow: true } },
      switches: { api: { 'priority:low': 'shed' } },
    })

    const history = await bulwark('rules', 'history', ...src, '--limit', '2')
    expect(history.code).toBe(0)
    expect(history.out).toMatch(/^3 {2}\S+ {2}alice {2}set\n/)
    expect(history.out).toContain('switches api priority:low: - -> "shed"')
    expect(history.out).not.toMatch(/^1 /m)
    const json = JSON.parse((await bulwark('rules', 'history', ...src, '--json')).out) as Array<{ message?: string }>
    expect(json.map((r) => r.message)).toEqual([undefined, undefined, 'first'])

    expect((await bulwark('rules', 'rollback', ...src, '1')).out).toContain('rollback: version 4 written')
    expect(doc()).toMatchObject({
      version: 4,
      switches: {},
      components: { 'token-bucket.gw': { rules: { rate: 500 } } },
    })
    expect(doc().components['bbr.api']).toBeUndefined()

    const status = await bulwark('rules', 'status', ...src)
    expect(status.out).toContain('version 4 by alice')
    expect(status.out).toContain('canary: none')
    expect(status.out).toContain('hosts: this source keeps no reports (a file)')
    const statusJson = JSON.parse((await bulwark('rules', 'status', ...src, '--json')).out) as {
      document: RuleDocument
    }
    expect(statusJson.document.version).toBe(4)
  })

  it('sends a change to a canary first, then promotes it; or aborts it', async () => {
    const { url, doc } = fileSource()
    const src = ['--source', url, '--namespace', 'shop']
    await bulwark('set', ...src, 'token-bucket.gw', 'rate=100')
    expect((await bulwark('set', ...src, '--canary', '10%,zone=a', 'token-bucket.gw', 'rate=200')).code).toBe(0)
    expect(doc().canary).toMatchObject({ target: { share: 0.1, labels: { zone: 'a' } } })
    expect((await bulwark('rules', 'status', ...src)).out).toMatch(/canary: since version 2, \{.*"zone":"a"/)
    expect((await bulwark('rules', 'promote', ...src)).out).toContain('promote: version 3 written')
    expect(doc()).toMatchObject({ components: { 'token-bucket.gw': { rules: { rate: 200 } } } })
    expect(doc().canary).toBeUndefined()

    await bulwark('set', ...src, '--canary', 'track=beta', 'token-bucket.gw', 'rate=300')
    expect((await bulwark('rules', 'abort', ...src)).code).toBe(0)
    expect(doc()).toMatchObject({ version: 5, components: { 'token-bucket.gw': { rules: { rate: 200 } } } })
    expect(doc().canary).toBeUndefined()
  })

  it('refuses a bad change whole, exit code 2, naming what is wrong, and writes nothing', async () => {
    const { url, doc } = fileSource()
    const src = ['--source', url, '--namespace', 'shop']
    await bulwark('set', ...src, 'token-bucket.gw', 'rate=100')
    const refusals = [
      ['token-bucket.gw', 'rate=-5'],
      ['token-bucket.gw', 'colour=3'],
      ['warp-drive.gw', 'rate=1'],
      ['token-bucket.gw', 'shadow=maybe'],
      ['switches.api', 'priority:urgent=shed'],
      ['--canary', '250%', 'token-bucket.gw', 'rate=1'],
    ]
    for (const args of refusals) {
      const result = await bulwark('set', ...src, ...args)
      expect({ args, code: result.code, out: result.out }).toEqual({ args, code: 2, out: '' })
      expect(result.err).toMatch(/^bulwark set: /)
    }
    expect((await bulwark('rules', 'rollback', ...src, 'latest')).err).toContain('version')
    expect((await bulwark('rules', 'rewind', ...src)).code).toBe(2)
    expect(doc().version).toBe(1)
  })

  it('says how to use it, and that this host follows no source', async () => {
    expect(await bulwark('rules')).toMatchObject({ code: 2, out: expect.stringContaining('bulwark rules status') })
    expect(await bulwark('rules', '--help')).toMatchObject({ code: 0, out: expect.stringContaining('rollback') })
    expect(await bulwark('set', '--source', '--help')).toMatchObject({
      code: 0,
      out: expect.stringContaining('--canary'),
    })
    const local = await bulwark('rules', 'status', '--namespace', 'nobody-follows-here')
    expect(local).toEqual({ code: 0, out: 'No process of this host follows a rule source.\n', err: '' })
    expect(JSON.parse((await bulwark('rules', 'status', '--namespace', 'nobody-follows-here', '--json')).out)).toEqual(
      [],
    )
  })
})
