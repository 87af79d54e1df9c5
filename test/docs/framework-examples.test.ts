// The runnable examples of the integrations guide (examples/nestjs, examples/hono) run as written: each starts in a
// child process (resolving `bulwark/...` as the package's own exports), on a free port, and answers.
import { type ChildProcess, spawn } from 'child_process'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const root = path.join(__dirname, '..', '..')
const children: ChildProcess[] = []

afterEach(() => {
  for (const child of children.splice(0)) child.kill()
})

/** Starts an example on port 0; resolves its base URL once it says it listens. */
async function start(file: string): Promise<string> {
  const env = { ...process.env, PORT: '0', BULWARK_SHARED: uniqueName('example') }
  const child = spawn(process.execPath, [path.join(root, file)], { cwd: root, env })
  children.push(child)
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const port = await waitFor(() => /listening on (\d+)/.exec(output)?.[1], {
    what: `${file} to listen`,
    timeout: 20_000,
  })
  return `http://127.0.0.1:${port}`
}

describe('the framework examples of the integrations guide', () => {
  it('examples/hono/server.mjs answers through its guard', async () => {
    const base = await start('examples/hono/server.mjs')
    expect(await (await fetch(`${base}/health`)).text()).toBe('ok')
    expect(await (await fetch(`${base}/hello/ada`)).json()).toEqual({ hello: 'ada', aborted: false })
  })

  it('examples/nestjs/main.cjs answers through BulwarkModule', async () => {
    const base = await start('examples/nestjs/main.cjs')
    expect(await (await fetch(`${base}/health`)).text()).toBe('ok')
    expect(await (await fetch(`${base}/hello/ada`)).json()).toEqual({ hello: 'ada' })
  })
})
