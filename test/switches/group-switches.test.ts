// Operators' switches on BreakerGroups and the outbound guards' breakers (docs/guide/degrade.md, "Manual switches"):
// `breaker:<group>` forces every key's breaker, `breaker:<group>/<key>` one key's; set from another process (the
// bulwark CLI), obeyed at the next call, a forced refusal told apart (BreakerOpenError.forced), gone once cleared.
import * as grpc from '@grpc/grpc-js'
import { spawnSync } from 'child_process'
import * as http from 'http'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import {
  type Breaker,
  BreakerGroup,
  CircuitBreaker,
  InvalidOptionError,
  SreBreaker,
  Switchboard,
} from '../../lib/index'
import { breakerOpenError } from '../../lib/guards/outbound/breaker-port'
import { grpcClientGuard, GrpcStatus } from '../../lib/entries/grpc'
import { undiciGuard } from '../../lib/entries/undici'
import '../helpers/cleanup-regions'
import { uniqueName } from '../helpers/unique-name'
import { call, EchoClient, startEcho } from '../integrations/grpc-service'
import { serving } from '../integrations/inbound-scenarios'
import { undiciMajors } from '../integrations/undici-majors'

const cli = path.resolve(__dirname, '..', '..', 'dist', 'cjs', 'ops', 'cli', 'bulwark.js')
/** `bulwark set switches.<board> ...` in another process; fails the test when the CLI does. */
function setSwitches(board: string, ...pairs: string[]): void {
  const out = spawnSync(process.execPath, [cli, 'set', `switches.${board}`, ...pairs], {
    encoding: 'utf8',
    timeout: 10_000,
  })
  expect(out.status, out.stderr + out.stdout).toBe(0)
}

const opened: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close()
})

function sharedBoard(): { board: Switchboard; name: string } {
  const name = uniqueName('group-switches')
  const board = new Switchboard({ shared: name })
  opened.push(board)
  return { board, name }
}

describe('switches on a BreakerGroup', () => {
  it("`breaker:<group>` forces every key's breaker, `breaker:<group>/<key>` one key's, from another process", async () => {
    const { board, name } = sharedBoard()
    const groupName = uniqueName('pay')
    const group = new BreakerGroup(
      (_key, shared) => new CircuitBreaker({ shared, failureRatio: 0.5, minimumCalls: 2 }),
      { shared: groupName, switches: board },
    )
    opened.push(group)
    for (let i = 0; i < 4; i++) group.get('eu')!.recordFailure() // opens eu's breaker
    expect(group.get('eu')!.tryAcquire()).toBe(false)
    expect(group.get('us')!.tryAcquire()).toBe(true)

    setSwitches(name, `breaker:${groupName}=open`)
    expect(group.get('us')!.tryAcquire()).toBe(false)
    expect(group.get('asia')!.tryAcquire()).toBe(false) // a key made after the switch obeys it too
    const refused = await group
      .get('us')!
      .execute(async () => 'x')
      .catch((e: unknown) => e)
    expect(refused).toMatchObject({ code: 'ERR_BULWARK_BREAKER_OPEN', forced: true })
    expect((refused as Error).message).toMatch(/forced open/)

    // The key's own switch comes before the group's: eu forced closed although its breaker opened.
    setSwitches(name, `breaker:${groupName}/eu=closed`)
    expect(group.get('eu')!.tryAcquire()).toBe(true)
    expect(group.get('us')!.tryAcquire()).toBe(false)

    setSwitches(name, 'clear=all')
    expect(group.get('us')!.tryAcquire()).toBe(true)
    expect(group.get('eu')!.tryAcquire()).toBe(false) // its own state again: the failures opened it
    const ownRefusal = await group
      .get('eu')!
      .execute(async () => 'x')
      .catch((e: unknown) => e)
    expect(ownRefusal).toMatchObject({ code: 'ERR_BULWARK_BREAKER_OPEN', forced: false })
  })

  it('a local group is addressed by its name; a member with switches of its own obeys both boards', () => {
    const { board, name } = sharedBoard()
    const own = new Switchboard()
    opened.push(own)
    const group = new BreakerGroup(() => new SreBreaker({ switches: own }), { name: 'inventory', switches: board })
    opened.push(group)
    expect(group.get('a')!.tryAcquire()).toBe(true)
    setSwitches(name, 'breaker:inventory/a=open')
    expect(group.get('a')!.tryAcquire()).toBe(false)
    expect(group.get('b')!.tryAcquire()).toBe(true)
    board.clearAll()
    expect(group.get('a')!.tryAcquire()).toBe(true)
    expect(() => new BreakerGroup(() => new SreBreaker(), { switches: board })).toThrow(InvalidOptionError)
    expect(() => new BreakerGroup(() => new SreBreaker(), { switches: board, name: 'a/b' })).toThrow(/`name`/)
    expect(() => new BreakerGroup(() => new SreBreaker(), { switches: {} as never, name: 'x' })).toThrow(/`switches`/)
  })

  it('leaves a breaker the application wrote alone, even one with a `switch` field of its own', () => {
    const { board } = sharedBoard()
    const theirs = { position: 'up' }
    const custom: Breaker & { switch: unknown } = {
      shared: undefined,
      state: 'open',
      usesDuration: false,
      switch: theirs,
      tryAcquire: () => false,
      recordSuccess: () => undefined,
      recordFailure: () => undefined,
      execute: () => Promise.reject(new Error('refused')),
      close: () => undefined,
    }
    const group = new BreakerGroup(() => custom, { name: 'custom', switches: board })
    opened.push(group)
    expect(group.get('a')).toBe(custom) // joining the group's switches threw: their `switch` has no joinGroup
    expect(custom.switch).toBe(theirs)
    // A refusal it made is not an operator's (reading their `switch` as ours threw: it has no `forced`).
    expect(breakerOpenError(custom, 'custom').forced).toBe(false)
  })
})

describe("switches on the outbound guards' breakers", () => {
  it('undiciGuard: `breaker:undici/<origin>` refuses its requests locally (forced), other origins go on', async () => {
    const { board, name } = sharedBoard()
    let reached = 0
    const origin = await serving(http.createServer((_req, res) => (reached++, res.end('ok'))).listen(0, '127.0.0.1'))
    opened.push(origin)
    const guard = undiciGuard({ bulkheads: false, switches: board })
    const { Agent, request } = undiciMajors[0].undici
    const dispatcher = new Agent().compose(guard)
    opened.push(dispatcher, guard)
    const url = `http://127.0.0.1:${origin.port}/`
    expect(await (await request(url, { dispatcher })).body.text()).toBe('ok')

    setSwitches(name, `breaker:undici/http://127.0.0.1:${origin.port}=open`)
    const refused = await request(url, { dispatcher }).catch((e: unknown) => e)
    expect(refused).toMatchObject({ code: 'ERR_BULWARK_BREAKER_OPEN', forced: true })
    expect(reached).toBe(1) // never sent
    setSwitches(name, `breaker:undici/http://127.0.0.1:${origin.port}=clear`)
    expect(await (await request(url, { dispatcher })).body.text()).toBe('ok')
    expect(reached).toBe(2)
    expect(() => undiciGuard({ breakers: new BreakerGroup(() => new SreBreaker()), switches: board })).toThrow(
      /`switches`.*set it on your BreakerGroup/,
    )
  })

  it('grpcClientGuard: `breaker:grpc/<method>` ends its calls locally with UNAVAILABLE; forced closed lets calls through an open breaker', async () => {
    const { board, name } = sharedBoard()
    const reached = { echo: 0, other: 0 }
    const server = await startEcho({
      echo: (_req, done) => (reached.echo++, done({ code: GrpcStatus.UNAVAILABLE, details: 'down' })),
      other: (_req, done) => (reached.other++, done(null, {})),
    })
    opened.push(server)
    const guard = grpcClientGuard({ breaker: { minimumCalls: 10, random: () => 0 }, switches: board })
    const client = new EchoClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), {
      interceptors: [guard],
    })
    opened.push(guard, client)

    setSwitches(name, 'breaker:grpc//test.Echo/Other=open')
    const refused = await call(client, 'other', {})
    expect(refused.code).toBe(GrpcStatus.UNAVAILABLE)
    expect(refused.details).toMatch(/forced open \(rejected locally\)/)
    expect(reached.other).toBe(0)

    for (let i = 0; i < 10; i++) await call(client, 'echo', {}) // opens echo's breaker
    expect((await call(client, 'echo', {})).details).toMatch(/is open \(rejected locally\)/)
    setSwitches(name, 'breaker:grpc//test.Echo/Echo=closed')
    expect((await call(client, 'echo', {})).details).toBe('down') // sent although its breaker is open
    expect(reached.echo).toBe(11)
  })
})
