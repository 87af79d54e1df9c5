// A URL's source kept in a worker thread (lib/ops/fleet/thread-rule-source.ts, source-thread.ts): the thread's
// protocol here over a MessageChannel, and a real thread of the built 'bulwark/fleet' entry reading and watching a
// file source.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { MessageChannel, type MessagePort } from 'worker_threads'
import { afterAll, afterEach, describe, expect, it } from 'vitest'

import { setComponent } from '../../lib/ops/fleet/document-changes'
import { emptyDocument } from '../../lib/ops/fleet/rule-document'
import { type SourceMessage, serveSource } from '../../lib/ops/fleet/source-thread'
import { ThreadRuleSource } from '../../lib/ops/fleet/thread-rule-source'
import { waitFor } from '../helpers/wait-for'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-source-thread-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const closing: Array<() => unknown> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

let files = 0
/** A file holding a document at `version` with token-bucket.gw's rate; returns its URL and a writer of the next. */
function ruleFile(rate: number) {
  const file = path.join(dir, `rules-${++files}.json`)
  const write = (r: number, version: number) =>
    fs.writeFileSync(
      file,
      JSON.stringify({
        ...setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: r } }, { author: 't' }),
        version,
      }),
    )
  write(rate, 1)
  return { url: `file://${file}`, write }
}

/** The thread's side served on one port of a channel; the other port asks and collects what comes back. */
function served(url: string) {
  const { port1, port2 } = new MessageChannel()
  closing.push(() => (port1.close(), port2.close()))
  serveSource(port1 as unknown as MessagePort, url, 'shop')
  const messages: SourceMessage[] = []
  port2.on('message', (m: SourceMessage) => messages.push(m))
  let id = 0
  const ask = async (request: object) => {
    const asked = ++id
    port2.postMessage({ ...request, id: asked })
    return waitFor(() => messages.find((m) => 'id' in m && m.id === asked), { what: `the answer to ${asked}` })
  }
  return { ask, messages }
}

describe('the source thread’s protocol', () => {
  it('answers reads, passes on what it watches, and closes', async () => {
    const { url, write } = ruleFile(10)
    const { ask, messages } = served(url)
    const read = await ask({ op: 'read' })
    expect(read).toMatchObject({ ok: true, value: { revision: 1 } })
    expect(await ask({ op: 'reports' })).toEqual({ id: 2, ok: true, value: undefined })
    expect(await ask({ op: 'watch' })).toEqual({ id: 3, ok: true, value: undefined })
    write(20, 2)
    const seen = await waitFor(() => messages.find((m) => 'event' in m && m.event === 'document' && m.revision === 2))
    expect(JSON.parse((seen as { text: string }).text).components['token-bucket.gw'].rules.rate).toBe(20)
    expect(await ask({ op: 'close' })).toMatchObject({ ok: true })
  })

  it('says when its source cannot be opened, and refuses every request', async () => {
    const { ask, messages } = served('gopher://rules.example/')
    const said = await waitFor(() => messages.find((m) => 'event' in m && m.event === 'error'))
    expect(said).toMatchObject({ message: expect.stringContaining('gopher') })
    expect(await ask({ op: 'read' })).toEqual({ id: 1, ok: false, message: 'the source could not be opened' })
  })
})

describe('ThreadRuleSource', () => {
  it('runs the built fleet entry in a thread that reads and watches the source', async () => {
    expect(ThreadRuleSource.available()).toBe(true)
    const { url, write } = ruleFile(30)
    const source = new ThreadRuleSource(url, 'shop')
    closing.push(() => source.close())
    expect(source.description).toContain('(shop)')
    expect(await source.read()).toMatchObject({ revision: 1 })
    const revisions: number[] = []
    const errors: Error[] = []
    source.watch(
      (d) => revisions.push(d.revision),
      (e) => errors.push(e),
    )
    write(40, 2)
    await waitFor(() => revisions.includes(2), { what: 'the new document through the thread' })
    expect(await source.reports()).toBeUndefined()
    await source.close()
    expect(source.dead).toBe(false)
    await expect(source.read()).rejects.toThrow('closed')
    expect(errors).toEqual([])
  })
})
