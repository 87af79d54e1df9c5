// Nothing the application gives the guard can take the process down or leave a client hanging (issue 32, item 3),
// asserted against every inbound adapter over real sockets: a fallback answer Node refuses to write (from the
// refusal, from a timer, from a rejection handler), an application function that throws, and a timeout's answer
// after the handler had set headers of its own.
import { afterEach, expect, it } from 'vitest'

import { BbrLimiter, KeyedLimiter, Switchboard, TokenBucket } from '../../lib/index'
import type { InboundGuardOptions } from '../../lib/entries/http'
import { waitFor } from '../helpers/wait-for'
import {
  type AppHandler,
  controlledLimiter,
  headerOf,
  type Reply,
  type ScenarioClient,
  type StartServer,
  type TestServer,
} from './inbound-scenarios'

/** Headers Node refuses to write on at least one transport. */
const UNWRITABLE: Array<Record<string, string>> = [
  { connection: 'close' }, // a connection header: HTTP/2 refuses it (before: ERR_HTTP2_INVALID_CONNECTION_HEADERS)
  { 'x-note': 'one\r\nset-cookie: two' }, // a line break in a value
  { 'x bad': '1' }, // a space in a name
]

/** A function of the options named `name`: throws for a request whose x-break header (metadata) names it. */
export function broken<T>(name: string, value: T): (request: unknown) => T {
  return (request) => {
    if (headerOf(request, 'x-break') === name) throw new Error(`a bug in ${name}`)
    return value
  }
}

/** `reply`, or a failure if no complete answer came within `ms` (a client left waiting for ever). */
function within(ms: number, reply: Promise<Reply>): Promise<Reply> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no complete answer within ${ms} ms`)), ms)
  })
  return Promise.race([reply, late]).finally(() => clearTimeout(timer))
}

export function answerSafetyScenarios(start: StartServer, client: ScenarioClient): void {
  let server: TestServer | undefined
  const open = async (guard: InboundGuardOptions<any>, handler: AppHandler = async () => 'ok') => {
    server = await start(guard, handler)
    return server
  }
  afterEach(async () => {
    await server?.close()
    server = undefined
  })
  const get = (headers: Record<string, string> = {}) => within(2000, client.get((server as TestServer).port, headers))
  const stats = () => (server as TestServer).stats?.()

  it('a fallback answer Node cannot write, for a shed request, gets the plain 503, counted; the server lives', async () => {
    const c = controlledLimiter(2)
    let next = 0
    await open({ limiter: c.limiter, fallback: () => ({ headers: UNWRITABLE[next++ % UNWRITABLE.length] }) })
    c.hold(3)
    c.signal.load = 900
    for (let i = 0; i < UNWRITABLE.length; i++) {
      const r = await get()
      expect(r.status).toBe(503)
      expect(JSON.parse(r.body)).toEqual({ error: 'overloaded', reason: 'in-flight' })
    }
    expect(stats()).toMatchObject({ fallbacks: 0, fallbackErrors: UNWRITABLE.length })
    c.releaseHeld()
    c.signal.load = 0
    expect(await get()).toMatchObject({ status: 200, body: 'ok' })
    c.limiter.close()
  })

  it('a fallback answer Node cannot write, for a timed-out handler (from a timer), gets the plain 503', async () => {
    let next = 0
    let stalled = 0
    await open(
      { limiter: false, timeout: 30, fallback: () => ({ headers: UNWRITABLE[next++ % UNWRITABLE.length] }) },
      () => (stalled++, new Promise<string>(() => undefined)),
    )
    for (let i = 0; i < UNWRITABLE.length; i++) {
      const r = await get()
      expect(r.status).toBe(503)
      expect(JSON.parse(r.body)).toEqual({ error: 'unavailable' })
    }
    expect(stalled).toBe(UNWRITABLE.length)
    expect(stats()).toMatchObject({ timedOut: UNWRITABLE.length, fallbacks: 0, fallbackErrors: UNWRITABLE.length })
  })

  it('a fallback answer Node cannot write, for a handler that rejected, gets the plain 503', async () => {
    let next = 0
    await open({ limiter: false, fallback: () => ({ headers: UNWRITABLE[next++ % UNWRITABLE.length] }) }, async () => {
      throw new Error('database down')
    })
    for (let i = 0; i < UNWRITABLE.length; i++) {
      const r = await get()
      expect(r.status).toBe(503)
      expect(JSON.parse(r.body)).toEqual({ error: 'unavailable' })
    }
    expect(stats()).toMatchObject({ fallbacks: 0, fallbackErrors: UNWRITABLE.length })
  })

  it('an application function that throws gets the plain 500, counted, its handler not run, nothing held', async () => {
    const limiter = new BbrLimiter({ fairness: true, minInFlight: 20, signal: () => 0 })
    const board = new Switchboard()
    board.set('route:/elsewhere', 'shed') // a route switch: the guard asks for every request's route
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 1000, burst: 1000, now: () => 0 }))
    let calls = 0
    await open(
      {
        limiter,
        priority: broken('priority', 'normal'),
        priorityHeader: 'x-priority',
        trustPriority: broken('trustPriority', false),
        rateLimit: { limiter: perClient, key: broken('rateLimit.key', 'client') },
        keyConcurrency: { max: 5, key: broken('keyConcurrency.key', 'tenant') },
        fairness: { key: broken('fairness.key', 'tenant') },
        switches: board,
        route: broken('route', '/work'),
        deadline: { header: 'x-deadline-ms', trust: broken('deadline.trust', false) },
      },
      async () => (calls++, 'ok'),
    )
    const names = [
      'priority',
      'trustPriority',
      'rateLimit.key',
      'keyConcurrency.key',
      'fairness.key',
      'route',
      'deadline.trust',
    ]
    for (const name of names) {
      const r = await get({ 'x-break': name, 'x-priority': 'critical' })
      expect({ name, status: r.status, body: JSON.parse(r.body) }).toEqual({
        name,
        status: 500,
        body: { error: 'internal error' },
      })
    }
    expect(calls).toBe(0)
    expect(stats()).toMatchObject({ callbackErrors: names.length, keyConcurrency: { inFlight: 0 } })
    expect(limiter.stats()).toMatchObject({ inFlight: 0, admitted: 0 })
    expect(await get()).toMatchObject({ status: 200, body: 'ok' }) // the server lives, and the others pass
    await waitFor(() => limiter.inFlight === 0, { what: 'the request to be released' })
    limiter.close()
    board.close()
  })

  it("a timeout's answer starts from clean headers: nothing the handler set (a length, a cookie) goes with it", async () => {
    let open_: () => void = () => undefined
    const gate = new Promise<void>((r) => (open_ = r))
    let fallback = true
    await open(
      { limiter: false, timeout: 30, fallback: () => (fallback ? { body: 'gone' } : undefined) },
      async (_signal, setHeader) => {
        setHeader?.('content-length', '100000')
        setHeader?.('set-cookie', 'session=from-the-handler')
        setHeader?.('x-handler', 'yes')
        await gate
        return 'late'
      },
    )
    // Before: the client waited for ever for 100 000 bytes, and got the handler's cookie.
    const degraded = await get()
    expect(degraded).toMatchObject({ status: 200, body: 'gone' })
    expect(degraded.headers['set-cookie']).toBeUndefined()
    expect(degraded.headers['x-handler']).toBeUndefined()
    fallback = false
    const plain = await get()
    expect(plain.status).toBe(503)
    expect(JSON.parse(plain.body)).toEqual({ error: 'timeout' })
    expect(plain.headers['set-cookie']).toBeUndefined()
    open_()
  })
}
