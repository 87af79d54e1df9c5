import * as http from 'http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { BreakerOpenError, RetryBudget, type SreBreaker } from '../../lib/index'
import { undiciGuard } from '../../lib/entries/undici'
import { badOptionField } from './option-field'
import { ManualClock } from '../helpers/manual-clock'
import { waitFor } from '../helpers/wait-for'
import { serving, type TestServer } from './inbound-scenarios'
import { nodeFetchFits, nodeFetchMajor, nodeFetchSeesGlobal, type UndiciModule, undiciMajors } from './undici-majors'

// One origin answers what the path says (after a first segment naming the suite): /status/<code>, or
// /flaky/<id>/<n> (503 for the first n hits of <id>, then 200), /big/<bytes> (that many bytes), or /hang (never).
// It counts hits per path and connections.
const hits = new Map<string, number>()
let connections = 0
let origin: TestServer
let other: TestServer
let refused: string

function answer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = req.url ?? '/'
  const n = (hits.get(path) ?? 0) + 1
  hits.set(path, n)
  const [, , kind, a, b] = path.split('/')
  if (kind === 'hang') return
  if (kind === 'big') return void res.end(Buffer.alloc(Number(a), 'x'))
  const status = kind === 'status' ? Number(a) : kind === 'flaky' ? (n <= Number(b) ? 503 : 200) : 200
  res.writeHead(status, { 'content-type': 'text/plain' })
  res.end(`${status} from attempt ${n}`)
}

beforeAll(async () => {
  const server = http.createServer(answer)
  server.on('connection', () => connections++)
  origin = await serving(server.listen(0, '127.0.0.1'))
  other = await serving(http.createServer(answer).listen(0, '127.0.0.1'))
  const closed = await serving(http.createServer().listen(0, '127.0.0.1'))
  await closed.close()
  refused = `http://127.0.0.1:${closed.port}`
})
afterAll(async () => {
  await origin.close()
  await other.close()
})

// request 5, random 0: once 5 attempts are in the window and none succeeded, every call is rejected.
const strict = { minimumCalls: 5, random: () => 0 }

/** Settles within `ms`, or rejects saying that it hung (a hang must show as a failure, not a test timeout). */
function within<T>(promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hung for ${ms} ms`)), ms)))
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer))
}

function undiciSuite(major: number, u: UndiciModule): void {
  const version = `v${major}`
  const { Agent, getGlobalDispatcher, request, setGlobalDispatcher } = u
  const url = (server: TestServer, path: string) =>
    `http://127.0.0.1:${server.port}${path === '' ? '' : `/${version}${path}`}`
  const hit = (path: string) => hits.get(`/${version}${path}`)

  async function outcome(
    dispatcher: InstanceType<UndiciModule['Agent']> | ReturnType<InstanceType<UndiciModule['Agent']>['compose']>,
    target: string,
    method = 'GET',
  ) {
    try {
      const res = await request(target, { dispatcher, method: method as 'GET' })
      return { status: res.statusCode, body: await res.body.text() }
    } catch (error) {
      return { error }
    }
  }

  describe(`undiciGuard (undici ${version} interceptor)`, () => {
    it('opens the origin’s breaker on 5xx and rejects locally with BreakerOpenError; other origins keep flowing', async () => {
      const guard = undiciGuard({ breaker: strict, attempts: 1 })
      const dispatcher = new Agent().compose(guard)
      for (let i = 0; i < 5; i++) expect((await outcome(dispatcher, url(origin, '/status/500'))).status).toBe(500)
      const rejected = await outcome(dispatcher, url(origin, '/status/500'))
      expect(rejected.error).toBeInstanceOf(BreakerOpenError)
      expect(hit('/status/500')).toBe(5)
      expect((await outcome(dispatcher, url(other, '/status/200'))).status).toBe(200)
      expect(guard.breakers.keys().sort()).toEqual([url(origin, ''), url(other, '')].sort())
      guard.close()
    })

    it("shadow mode: an open origin's breaker lets requests through, counted as would-be refusals", async () => {
      const guard = undiciGuard({ breaker: strict, attempts: 1 })
      const dispatcher = new Agent().compose(guard)
      for (let i = 0; i < 5; i++) await outcome(dispatcher, url(origin, '/status/502/shadow'))
      const breaker = guard.breakers.get(url(origin, '')) as SreBreaker
      breaker.configure({ shadow: true })
      expect((await outcome(dispatcher, url(origin, '/status/502/shadow'))).status).toBe(502)
      expect(hit('/status/502/shadow')).toBe(6)
      expect(breaker.stats().rules.shadow?.wouldRefuse).toContainEqual({ reason: 'open', count: 1 })
      breaker.configure({ shadow: false })
      expect((await outcome(dispatcher, url(origin, '/status/502/shadow'))).error).toBeInstanceOf(BreakerOpenError)
      guard.close()
    })
    it('does not count 4xx as failures (unless isFailure says so)', async () => {
      const lenient = undiciGuard({ breaker: strict, attempts: 1 })
      const a = new Agent().compose(lenient)
      for (let i = 0; i < 20; i++) expect((await outcome(a, url(other, '/status/404'))).status).toBe(404)
      expect(lenient.breakers.get(url(other, ''))!.stats()).toMatchObject({ accepts: 20, state: 'closed' })
      const picky = undiciGuard({ breaker: strict, attempts: 1, isFailure: (s) => s >= 400 })
      const b = new Agent().compose(picky)
      for (let i = 0; i < 5; i++) await outcome(b, url(other, '/status/404'))
      expect((await outcome(b, url(other, '/status/404'))).error).toBeInstanceOf(BreakerOpenError)
      lenient.close()
      picky.close()
    })

    it('counts connection errors as failures', async () => {
      const guard = undiciGuard({ breaker: strict, attempts: 1 })
      const dispatcher = new Agent().compose(guard)
      for (let i = 0; i < 5; i++)
        expect((await outcome(dispatcher, `${refused}/x`)).error).toMatchObject({ code: 'ECONNREFUSED' })
      expect((await outcome(dispatcher, `${refused}/x`)).error).toBeInstanceOf(BreakerOpenError)
      guard.close()
    })

    it('retries idempotent requests on the same connection and delivers the last attempt', async () => {
      const guard = undiciGuard({ breaker: { minimumCalls: 1000 }, baseDelay: 1 })
      const dispatcher = new Agent().compose(guard)
      const before = connections
      expect(await outcome(dispatcher, url(origin, '/flaky/a/2'))).toEqual({ status: 200, body: '200 from attempt 3' })
      expect(connections - before).toBe(1) // the failed attempts' bodies were drained, the socket kept
      expect(await outcome(dispatcher, url(origin, '/flaky/b/5'))).toEqual({ status: 503, body: '503 from attempt 3' })
      expect(hit('/flaky/b/5')).toBe(3)
      expect(await outcome(dispatcher, url(origin, '/flaky/c/1'), 'POST')).toEqual({
        status: 503,
        body: '503 from attempt 1',
      })
      expect((await outcome(dispatcher, `${refused}/r`)).error).toMatchObject({ code: 'ECONNREFUSED' })
      expect(guard.breakers.get(refused)!.stats().calls).toBe(3) // three attempts at the refused origin
      guard.close()
    })

    it('keeps retries within the retry budget', async () => {
      const clock = new ManualClock(0)
      const budget = new RetryBudget({ ratio: 0, minPerSecond: 0.2, window: 10_000, now: clock.now }) // 2 retries
      const guard = undiciGuard({ breaker: { minimumCalls: 1000 }, budget, baseDelay: 1 })
      const dispatcher = new Agent().compose(guard)
      for (let i = 0; i < 4; i++)
        expect((await outcome(dispatcher, url(origin, `/flaky/budget${i}/9`))).status).toBe(503)
      expect([0, 1, 2, 3].map((i) => hit(`/flaky/budget${i}/9`))).toEqual([3, 1, 1, 1])
      expect(budget.stats()).toMatchObject({ requests: 4, retries: 2, available: 0 })
      guard.close()
    })

    it('ends at once when the caller aborts during the backoff, and does not count a caller’s abort as a failure', async () => {
      const guard = undiciGuard({
        breaker: { minimumCalls: 1000 },
        baseDelay: 60_000,
        maxDelay: 60_000,
        random: () => 0.99,
      })
      const dispatcher = new Agent().compose(guard)
      const controller = new AbortController()
      const pending = request(url(origin, '/flaky/abort/9'), { dispatcher, signal: controller.signal })
      const breaker = guard.breakers.get(url(origin, ''))!
      await waitFor(() => breaker.stats().calls === 1, { interval: 2 }) // the 503 is in: backing off
      controller.abort()
      await expect(pending).rejects.toThrow(/abort/i)
      expect(hit('/flaky/abort/9')).toBe(1)
      const hang = new AbortController()
      const hanging = request(url(origin, '/hang'), { dispatcher, signal: hang.signal })
      await waitFor(() => hit('/hang') === 1, { interval: 2 })
      hang.abort()
      await expect(hanging).rejects.toThrow(/abort/i)
      expect(breaker.stats()).toMatchObject({ accepts: 0, calls: 1 }) // the 503 only
      guard.close()
    })

    it('streams a large body to a slow reader without stalling (the body pauses and resumes the attempt)', async () => {
      const guard = undiciGuard({ breaker: strict })
      const dispatcher = new Agent().compose(guard)
      const read = async () => {
        const res = await request(url(origin, '/big/8000000'), { dispatcher })
        let bytes = 0
        for await (const chunk of res.body) {
          bytes += (chunk as Buffer).length
          await new Promise((r) => setImmediate(r)) // slower than loopback: the body fills and drains many times
        }
        return bytes
      }
      expect(await within(read(), 10_000)).toBe(8_000_000)
      guard.close()
    })

    it('works through its own fetch, and opens the breaker in the middle of a fetch’s retries', async () => {
      const guard = undiciGuard({ breaker: strict, baseDelay: 1 })
      const dispatcher = new Agent().compose(guard)
      const ok = await within(u.fetch(url(other, '/flaky/own-fetch/1'), { dispatcher }))
      expect(await ok.text()).toBe('200 from attempt 2')
      // 3 attempts per fetch: the breaker opens on the 5th failed attempt, in the middle of the second fetch,
      // whose third attempt is then refused.
      expect((await within(u.fetch(url(origin, '/status/502'), { dispatcher }))).status).toBe(502)
      const failed = await within(u.fetch(url(origin, '/status/502'), { dispatcher }).catch((e: unknown) => e))
      expect(failed).toBeInstanceOf(TypeError)
      expect((failed as TypeError).cause).toBeInstanceOf(BreakerOpenError)
      expect(hit('/status/502')).toBe(5)
      guard.close()
    })

    // Which of the next two runs depends on whether this undici's handler API is the one Node's fetch speaks.
    it.runIf(nodeFetchFits(major))(
      `through Node's fetch (undici ${nodeFetchMajor}) with { dispatcher }: works`,
      async () => {
        const guard = undiciGuard({ breaker: strict, baseDelay: 1 })
        const dispatcher = new Agent().compose(guard)
        const answer = within(fetch(url(other, '/flaky/fetch/1'), { dispatcher } as unknown as RequestInit))
        expect(await (await answer).text()).toBe('200 from attempt 2')
        expect((await within(fetch(url(origin, '/status/503'), { dispatcher } as unknown as RequestInit))).status).toBe(
          503,
        )
        expect(hit('/status/503')).toBe(3)
        const refused = await within(
          fetch(url(origin, '/status/503'), { dispatcher } as unknown as RequestInit).catch((e) => e),
        )
        expect((refused as TypeError).cause).toBeInstanceOf(BreakerOpenError)
        guard.close()
      },
    )

    it.skipIf(nodeFetchFits(major))(
      `through Node's fetch (undici ${nodeFetchMajor}) with { dispatcher }: fails at once with undici's error`,
      async () => {
        const guard = undiciGuard({ breaker: strict, baseDelay: 1 })
        const dispatcher = new Agent().compose(guard)
        const answer = within(fetch(url(other, '/flaky/fetch/1'), { dispatcher } as unknown as RequestInit))
        // The Agent does not speak this fetch's handler API, with the guard as without it: an error, not a hang.
        const error = await answer.catch((e: unknown) => e)
        expect(error).toBeInstanceOf(TypeError)
        expect(String((error as TypeError).cause)).toMatch(/invalid on(RequestStart|Error) method/)
        expect(hit('/flaky/fetch/1')).toBeUndefined()
        guard.close()
      },
    )

    it(`through Node's fetch (undici ${nodeFetchMajor}) and setGlobalDispatcher: ${nodeFetchSeesGlobal(major) ? 'works' : 'not seen by that fetch'}`, async () => {
      const previous = getGlobalDispatcher()
      const global = undiciGuard({ breaker: strict, attempts: 1 })
      setGlobalDispatcher(new Agent().compose(global))
      try {
        expect((await within(fetch(url(other, '/status/201')))).status).toBe(201)
        // undici 6 publishes its global dispatcher where only fetches before undici 8 look for it.
        expect(global.breakers.has(url(other, ''))).toBe(nodeFetchSeesGlobal(major))
        // get() would create the breaker: read its count only where the fetch made one.
        const key = url(other, '')
        const accepts = global.breakers.has(key) ? global.breakers.get(key)?.stats().accepts : undefined
        expect(accepts).toBe(nodeFetchSeesGlobal(major) ? 1 : undefined)
      } finally {
        setGlobalDispatcher(previous)
        global.close()
      }
    })

    it('rejects bad options with typed errors', () => {
      const field = (options: object) => badOptionField(undiciGuard, options)
      expect(field({ attempts: 0 })).toBe('attempts')
      expect(field({ budget: 5 })).toBe('budget')
      expect(field({ retryMethods: 'GET' })).toBe('retryMethods')
      expect(field({ isFailure: 500 })).toBe('isFailure')
      expect(field({ breaker: { request: -1 } })).toBe('request')
    })
  })
}

for (const { major, undici } of undiciMajors) undiciSuite(major, undici)
