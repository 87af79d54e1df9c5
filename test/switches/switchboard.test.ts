// Operators' switches: set from other processes (a script and the bulwark CLI), obeyed by the guards and breakers
// of this one at their next call, shown by bulwark top, and never undone until cleared.
import { spawnSync } from 'child_process'
import * as http from 'http'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { CircuitBreaker, InvalidArgumentError, loadInfo, SreBreaker, Switchboard } from '../../lib/index'
import { httpGuard } from '../../lib/entries/http'
import { inspectRegions } from '../../lib/entries/top'
import '../helpers/cleanup-regions'
import { reaperPasses } from '../helpers/reaper-passes'
import { runScript } from '../helpers/run-script'
import { uniqueName } from '../helpers/unique-name'
import { get, serving, type TestServer } from '../integrations/inbound-scenarios'

const cli = path.resolve(__dirname, '..', '..', 'dist', 'cjs', 'ops', 'cli', 'bulwark.js')
const bulwark = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 10_000 })

let board: Switchboard | undefined
let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  board?.close()
  server = board = undefined
})

describe('Switchboard', () => {
  it('sets, lists and clears switches; a bad change is refused whole; a full board says so', () => {
    board = new Switchboard({ slots: 2 })
    board.set('priority:low', 'shed')
    expect(board.list().map(({ target, mode }) => ({ target, mode }))).toEqual([
      { target: 'priority:low', mode: 'shed' },
    ])
    expect(() => board!.configure({ 'route:/a': 'shed', 'breaker:x': 'shed' as never })).toThrow(InvalidArgumentError)
    expect(() => board!.set('priority:urgent' as never, 'shed')).toThrow(/priority:critical\|high\|normal\|low/)
    expect(() => board!.set('nothing' as never, 'shed')).toThrow(InvalidArgumentError)
    expect(board.list()).toHaveLength(1) // nothing of the refused change applied
    board.set('route:/a', 'fallback')
    expect(() => board!.set('route:/b', 'shed')).toThrow(/at most 2 switches/)
    board.set('route:/a', 'shed') // a new mode for a target on the board takes no new slot
    expect(board.clear('priority:low')).toBe(true)
    expect(board.clear('priority:low')).toBe(false)
    expect(board.list().map((s) => `${s.target}=${s.mode}`)).toEqual(['route:/a=shed'])
  })

  it('another process forces shedding of a class and a route, and a fallback; the guard obeys at once; they stay', async () => {
    const name = uniqueName('switches')
    board = new Switchboard({ shared: name })
    const reasons: string[] = []
    const listener = httpGuard((_req, res) => res.end('served'), {
      limiter: false,
      switches: board,
      route: (req) => (req.url ?? '/').split('?')[0],
      priority: (req) => (req.headers['x-class'] === 'low' ? 'low' : 'normal'),
      fallback: (_req, reason) => (reasons.push(reason), reason === 'forced' ? { body: 'static page' } : undefined),
    })
    server = await serving(http.createServer(listener).listen(0, '127.0.0.1'))
    const port = server.port
    expect((await get(port, { 'x-class': 'low' })).body).toBe('served')

    const set = runScript(
      `const s = new b.Switchboard({ shared: ${JSON.stringify(name)} }); s.set('priority:low', 'shed'); s.close()`,
    )
    expect(set.stderr).toBe('')
    const shed = await get(port, { 'x-class': 'low' })
    expect(shed.status).toBe(503)
    expect(JSON.parse(shed.body)).toEqual({ error: 'overloaded', reason: 'forced' })
    expect((await get(port)).body).toBe('served') // normal is not switched

    const cliSet = bulwark('set', `switches.${name}`, 'route:/search=shed', 'route:/recommendations=fallback')
    expect(cliSet.status, cliSet.stderr + cliSet.stdout).toBe(0)
    expect(cliSet.stdout).toMatch(/route:\/search=shed/)
    expect((await get(port, {}, '/search?q=1')).status).toBe(503)
    expect(await get(port, {}, '/recommendations')).toMatchObject({ status: 200, body: 'static page' })
    expect(reasons).toEqual(['overload', 'overload', 'forced'])
    expect(listener.guard.stats().shedForced).toBe(3)

    // bulwark top shows every active switch.
    const [report] = inspectRegions({ names: [`switches.${name}`] })
    expect(report.view).toMatchObject({ type: 'switches' })
    expect((report.view as { switches: Array<{ target: string }> }).switches.map((s) => s.target)).toEqual([
      'priority:low',
      'route:/search',
      'route:/recommendations',
    ])
    const top = bulwark('top', '--once', name)
    expect(top.stdout).toMatch(/SWITCHES/)
    expect(top.stdout).toMatch(/route:\/recommendations\s+fallback/)

    // Nothing undoes a switch but clearing it: still there after other requests and after the reaper has passed
    // over the region since the CLI process that set it exited.
    await reaperPasses(loadInfo)
    expect((await get(port, {}, '/search')).status).toBe(503)
    const cleared = bulwark('set', `switches.${name}`, 'route:/search=clear', 'priority:low=clear')
    expect(cleared.status).toBe(0)
    expect((await get(port, {}, '/search')).body).toBe('served')
    expect((await get(port, { 'x-class': 'low' })).body).toBe('served')
    expect(bulwark('set', `switches.${name}`, 'clear=all').stdout).toMatch(/no switch/)
    expect((await get(port, {}, '/recommendations')).body).toBe('served')
  })

  it('forces breakers open and closed by their shared name, from another process', async () => {
    const name = uniqueName('switches')
    board = new Switchboard({ shared: name })
    const sre = new SreBreaker({ shared: uniqueName('pay'), switches: board })
    const circuit = new CircuitBreaker({
      shared: uniqueName('inv'),
      switches: board,
      failureRatio: 0.5,
      minimumCalls: 2,
    })
    expect(sre.tryAcquire()).toBe(true)
    const out = bulwark('set', `switches.${name}`, `breaker:${sre.shared}=open`, `breaker:${circuit.shared}=closed`)
    expect(out.status, out.stdout).toBe(0)
    expect(sre.tryAcquire()).toBe(false)
    for (let i = 0; i < 10; i++) circuit.recordFailure() // would open it
    expect(circuit.tryAcquire()).toBe(true) // forced closed
    await expect(sre.execute(async () => 'x')).rejects.toMatchObject({ code: 'ERR_BULWARK_BREAKER_OPEN' })
    board.clear(`breaker:${sre.shared}` as const)
    board.clear(`breaker:${circuit.shared}` as const)
    expect(sre.tryAcquire()).toBe(true)
    expect(circuit.tryAcquire()).toBe(false) // its own state again: the failures opened it
    sre.close()
    circuit.close()
  })

  it("bulwark set switches.<board> never reaches another application's board of that name", () => {
    const name = uniqueName('switches')
    board = new Switchboard({ shared: name, namespace: 'another-app' })
    const refused = bulwark('set', `switches.${name}`, 'priority:low=shed')
    expect(refused.status).toBe(1) // before: 0, and their low class was shed
    expect(refused.stdout).toContain(`switches.another-app.${name}`)
    expect(board.list()).toEqual([])
    expect(bulwark('set', `switches.another-app.${name}`, 'priority:low=shed').status).toBe(0)
    expect(board.list().map((s) => s.target)).toEqual(['priority:low'])
  })

  it('bulwark set refuses a board no process holds, and bad pairs, with usage', () => {
    expect(bulwark('set', 'switches.nobody-here', 'priority:low=shed').status).toBe(1)
    const name = uniqueName('switches')
    board = new Switchboard({ shared: name })
    const bad = bulwark('set', `switches.${name}`, 'priority:low=open')
    expect(bad.status).toBe(2)
    expect(bad.stdout).toMatch(/for priority: 'shed' or 'fallback'/)
    expect(board.list()).toEqual([])
  })

  // Issue 32, item 6: targets reached the terminal raw (a C1 CSI, a bidirectional override; --json keeps them as
  // JSON.stringify leaves them), and a switch's time that is no date (any process of the user can write it) threw.
  it('bulwark set and bulwark top print targets escaped, and a time that is no date stops neither', () => {
    const name = uniqueName('switches')
    board = new Switchboard({ shared: name })
    const target = 'route:/\u001b]0;owned\u0007\u009b31m\u202e'
    board.set(target as never, 'shed')
    const internals = board as unknown as { f64: Float64Array; slotsBase: number }
    internals.f64[internals.slotsBase / 8 + 1] = NaN // slot 0's time, as a peer writing garbage would leave it
    const shown = 'route:/\\u001b]0;owned\\u0007\\u009b31m\\u202e'
    const listed = bulwark('set', `switches.${name}`)
    expect(listed.status, listed.stderr).toBe(0) // before: RangeError: Invalid time value
    expect(listed.stdout).toBe(`switches.${name}: ${shown}=shed since unknown (NaN)\n`)
    const text = bulwark('top', name, '--once', '--interval', '0.05')
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout).toContain(`${shown}  shed  unknown (NaN)`)
    const json = bulwark('top', name, '--once', '--json', '--interval', '0.05')
    // eslint-disable-next-line no-control-regex -- nothing that acts on a terminal, JSON or not
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
    expect(JSON.parse(json.stdout).regions[0].view.switches[0].target).toBe(target)
  })
})
