// undiciGuard against scripted dispatchers, for each of undici's two handler APIs: what reaches the caller, and
// that nothing is left waiting (a handler API the guard does not know is refused at once; a dispatcher that throws
// on a retry fails the request).
import { describe, expect, it } from 'vitest'

import { BreakerOpenError, InvalidArgumentError } from '../../lib/index'
import { undiciGuard } from '../../lib/entries/undici'

const origin = 'http://upstream.test'
const get = { origin, method: 'GET', path: '/' }

/** A dispatcher's per-attempt controller (controller API), recording what is asked of it. */
class AttemptController {
  paused = false
  aborted = false
  reason: unknown = null
  rawHeaders: unknown = null
  rawTrailers: unknown = null
  abort(reason?: unknown): void {
    this.aborted = true
    this.reason = reason
  }
  pause(): void {
    this.paused = true
  }
  resume(): void {
    this.paused = false
  }
}

/** Records every call the caller's handler receives, and resolves `ended` on its end or error. */
function recordingHandler(api: 'controller' | 'callback') {
  const calls: unknown[][] = []
  let end: (value: unknown[]) => void = () => undefined
  const ended = new Promise<unknown[]>((r) => (end = r))
  const record =
    (name: string, last = false) =>
    (...args: unknown[]) => {
      calls.push([name, ...args])
      if (last) end([name, ...args])
      return true
    }
  const handler =
    api === 'controller'
      ? {
          onRequestStart: record('start'),
          onResponseStart: record('headers'),
          onResponseData: record('data'),
          onResponseEnd: record('end', true),
          onResponseError: record('error', true),
        }
      : {
          onConnect: record('start'),
          onHeaders: record('headers'),
          onData: record('data'),
          onComplete: record('end', true),
          onError: record('error', true),
        }
  return { handler, calls, ended }
}

type Attempt = (handler: any) => void

/** A dispatch that plays one scripted attempt per call, then throws. */
function scripted(attempts: Attempt[]) {
  let n = 0
  return (_options: unknown, handler: unknown): boolean => {
    const attempt = attempts[n++]
    if (attempt === undefined) throw new Error('no attempt scripted')
    queueMicrotask(() => attempt(handler))
    return true
  }
}

// One attempt answering `status` with one chunk of body, in each API.
const controllerAttempt =
  (status: number, controllers: AttemptController[] = []): Attempt =>
  (h) => {
    const c = new AttemptController()
    controllers.push(c)
    h.onRequestStart(c, {})
    c.rawHeaders = [Buffer.from('x-status'), Buffer.from(String(status))]
    h.onResponseStart(c, status, { 'x-status': String(status) }, 'text')
    h.onResponseData(c, Buffer.from(`${status}`))
    h.onResponseEnd(c, {})
  }
const callbackAttempt =
  (status: number, aborts: unknown[] = []): Attempt =>
  (h) => {
    h.onConnect((reason: unknown) => aborts.push(reason), {})
    h.onHeaders(status, [], () => undefined, 'text')
    h.onData(Buffer.from(`${status}`))
    h.onComplete([])
  }

const retrying = { breaker: { minimumCalls: 1000 }, baseDelay: 0, random: () => 0 }

describe('undiciGuard and undici’s handler APIs', () => {
  it('a dispatcher that throws at once (a handler API it does not speak) gives the bulkhead slot back', () => {
    const guard = undiciGuard(retrying)
    const dispatch = guard(() => {
      throw new Error('invalid onRequestStart method')
    })
    for (let i = 0; i < 3; i++)
      expect(() => dispatch(get, recordingHandler('callback').handler)).toThrow(/onRequestStart/)
    expect(guard.bulkheads?.get(origin)!.inFlight).toBe(0)
    guard.close()
  })

  it('refuses at once a handler of neither API, naming it and the methods it has', () => {
    const guard = undiciGuard(retrying)
    const dispatch = guard(scripted([]))
    for (const handler of [null, {}, { onHeaders() {}, onData() {} }, { onRequestStart() {} }]) {
      let error: unknown
      try {
        dispatch(get, handler)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as InvalidArgumentError).argument).toBe('handler')
    }
    expect(() => dispatch(get, { onRequestStart() {}, onFuture() {} })).toThrow(/it has onRequestStart, onFuture/)
    expect(guard.budget?.stats().requests).toBe(0) // a refused handler is not a request
    // An upgrade needs the upgrade method, not the response ones.
    const upgrade = { ...get, upgrade: 'websocket' }
    expect(() =>
      dispatch(upgrade, { onConnect() {}, onError() {}, onHeaders() {}, onData() {}, onComplete() {} }),
    ).toThrow(/onUpgrade/)
    guard.close()
  })

  it('controller API: the caller sees one start and the last attempt, with a controller that follows the attempts', async () => {
    const controllers: AttemptController[] = []
    const { handler, calls, ended } = recordingHandler('controller')
    const guard = undiciGuard(retrying)
    guard(scripted([controllerAttempt(503, controllers), controllerAttempt(200, controllers)]))(get, handler)
    await ended
    expect(calls.map((c) => c[0])).toEqual(['start', 'headers', 'data', 'end'])
    expect(calls[1][2]).toBe(200)
    const caller = calls[0][1] as AttemptController
    expect(caller).toBe(calls[3][1]) // one controller for the whole request
    expect(caller.rawHeaders).toEqual([Buffer.from('x-status'), Buffer.from('200')])
    caller.pause()
    expect(controllers[1].paused).toBe(true)
    expect(caller.paused).toBe(true)
    caller.resume()
    expect(controllers[1].paused).toBe(false)
    caller.abort(new Error('enough'))
    expect(controllers[1].reason).toEqual(new Error('enough'))
    expect(controllers[0].aborted).toBe(false)
    expect(caller.aborted).toBe(true)
    guard.close()
  })

  it('callback API: the caller sees one connect and the last attempt, and its abort reaches the attempt in flight', async () => {
    const aborts: unknown[] = []
    const { handler, calls, ended } = recordingHandler('callback')
    const guard = undiciGuard(retrying)
    guard(scripted([callbackAttempt(502, aborts), callbackAttempt(201, aborts)]))(get, handler)
    await ended
    expect(calls.map((c) => c[0])).toEqual(['start', 'headers', 'data', 'end'])
    expect(calls[1][1]).toBe(201)
    ;(calls[0][1] as (reason: unknown) => void)('stop')
    expect(aborts).toEqual(['stop'])
    guard.close()
  })

  for (const api of ['controller', 'callback'] as const) {
    it(`${api} API: a dispatcher that throws on a retry fails the request (no uncaught exception, no hang)`, async () => {
      const { handler, calls, ended } = recordingHandler(api)
      const guard = undiciGuard(retrying)
      const first = api === 'controller' ? controllerAttempt(503) : callbackAttempt(503)
      guard(scripted([first]))(get, handler)
      const [name, ...args] = await ended
      expect(name).toBe('error')
      expect(String(args[args.length - 1])).toMatch(/no attempt scripted/)
      expect(calls.map((c) => c[0])).toEqual(['start', 'error'])
      expect(guard.bulkheads?.get(origin)!.inFlight).toBe(0) // the thrown attempt gave its bulkhead slot back
      guard.close()
    })

    it(`${api} API: a refusal by the breaker reaches the caller as an error`, async () => {
      const { handler, ended } = recordingHandler(api)
      const guard = undiciGuard({ breaker: { minimumCalls: 1, random: () => 0 }, attempts: 1 })
      const first = api === 'controller' ? controllerAttempt(500) : callbackAttempt(500)
      guard(scripted([first]))(get, recordingHandler(api).handler)
      await new Promise((r) => setTimeout(r, 0))
      guard(scripted([]))(get, handler)
      const [name, ...args] = await ended
      expect(name).toBe('error')
      expect(args[args.length - 1]).toBeInstanceOf(BreakerOpenError)
      guard.close()
    })
  }
})
