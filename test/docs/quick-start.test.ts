// The front page's quick start must run as written: its code block from docs/readme/quick-start.md runs in a child
// process as `require('bulwark')` resolves it (the package's own exports), with three things swapped so that it runs
// here: the downstream's host is a local server, the port is any free one, and the shared names are this run's own.
import { spawn } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

import { uniqueName } from '../helpers/unique-name'

const root = path.join(__dirname, '..', '..')

function quickStart(): string {
  const source = fs.readFileSync(path.join(root, 'docs', 'readme', 'quick-start.md'), 'utf8')
  const code = /```js\n([\s\S]*?)```/.exec(source)?.[1]
  if (!code) throw new Error('docs/readme/quick-start.md has no js block')
  return code
}

// Runs before the example: a downstream answering 200 for /stock/good and 500 otherwise, fetch sent to it, and the
// example's server on a free port, asked for each answer once it listens.
const harness = `
const http = require('node:http')
const downstream = http.createServer((req, res) => {
  res.statusCode = req.url === '/stock/good' ? 200 : 500
  res.end(JSON.stringify({ url: req.url }))
})
const realFetch = globalThis.fetch
globalThis.fetch = (url, options) =>
  realFetch(String(url).replace('http://inventory.internal', 'http://127.0.0.1:' + downstream.address().port), options)
const listen = http.Server.prototype.listen
http.Server.prototype.listen = function (port, ...rest) {
  if (this === downstream) return listen.call(this, port, ...rest)
  this.once('listening', async () => {
    const base = 'http://127.0.0.1:' + this.address().port
    const good = await realFetch(base + '/good')
    const bad = await realFetch(base + '/bad')
    console.log(JSON.stringify({ good: [good.status, await good.text()], bad: [bad.status, await bad.text()] }))
    process.exit(0)
  })
  return listen.call(this, 0, '127.0.0.1')
}
downstream.listen(0, '127.0.0.1', () => {
`

function run(code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', `${harness}\n${code}\n})`], { cwd: root })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.once('exit', (exit) => resolve({ code: exit, stdout, stderr }))
  })
}

describe('the quick start on the front page', () => {
  it('runs as written: a guarded server whose downstream calls go through a breaker', async () => {
    const code = quickStart().replace(/shared: '([\w-]+)'/g, (_, name) => `shared: '${uniqueName(name)}'`)
    const result = await run(code)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({
      good: [200, JSON.stringify({ url: '/stock/good' })],
      bad: [502, ''],
    })
  })
})
