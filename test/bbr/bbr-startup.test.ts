// A freshly started server must answer its first requests: the start-up work that keeps its loop busy before and
// between them was not caused by requests, so the queueing-delay rule must not shed on it (docs/rules/bbr.md).
import { type ChildProcess, spawn } from 'child_process'
import * as http from 'http'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

const fixture = path.join(__dirname, '..', 'fixtures', 'starting-server.cjs')
const children: ChildProcess[] = []

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
})

function start(env: Record<string, string>): Promise<{ port: number; started: Promise<void> }> {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  const started = new Promise<void>((resolve) =>
    child.stderr.on('data', (d) => String(d).includes('started') && resolve()),
  )
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)))
    child.stdout.once('data', (d) => resolve({ port: Number(String(d).trim()), started }))
  })
}

function get(port: number, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode as number))
      })
      .on('error', reject)
  })
}

describe('BbrLimiter: a server that is still starting', () => {
  it('answers the requests that arrive between its start-up stretches (none is shed for queueing delay)', async () => {
    const { port, started } = await start({ CHUNKS: '6', CHUNK_MS: '150' })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const statuses: number[] = []
    let done = false
    void started.then(() => (done = true))
    // Asked at once, one request after the other, until the start-up work is over (and a few more).
    for (let extra = 0; extra < 3; extra += done ? 1 : 0) statuses.push(await get(port, agent))
    agent.destroy()
    expect(statuses.length).toBeGreaterThan(3)
    expect(statuses.filter((s) => s !== 200)).toEqual([])
  })
})
