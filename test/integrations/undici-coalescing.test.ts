import * as http from 'http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { undiciGuard } from '../../lib/adapters/undici/undici-guard'
import { serving, type TestServer } from './inbound-scenarios'
import { undiciMajors } from './undici-majors'

// An origin that answers each path after a short delay, with a body naming the path and the hit it was.
let origin: TestServer
const hits = new Map<string, number>()
beforeAll(async () => {
  const server = http.createServer((req, res) => {
    const n = (hits.get(req.url ?? '') ?? 0) + 1
    hits.set(req.url ?? '', n)
    setTimeout(() => res.end(`${req.url} #${n} ` + 'x'.repeat(64 * 1024)), 50)
  })
  origin = await serving(server.listen(0, '127.0.0.1'))
})
afterAll(async () => {
  await origin.close()
})

for (const { major, undici } of undiciMajors) {
  describe(`undiciGuard coalesce (undici ${major})`, () => {
    const url = (path: string) => `http://127.0.0.1:${origin.port}${path}`

    it('1 000 concurrent GETs of one URL reach the origin once and all get its answer', async () => {
      const guard = undiciGuard({ coalesce: true, bulkheads: false })
      const dispatcher = new undici.Agent().compose(guard)
      const path = `/hot/${major}`
      const bodies = await Promise.all(
        Array.from({ length: 1000 }, () => undici.request(url(path), { dispatcher }).then((r) => r.body.text())),
      )
      expect(hits.get(path)).toBe(1)
      expect(new Set(bodies).size).toBe(1)
      expect(bodies[0].startsWith(`${path} #1 `)).toBe(true)
      guard.close()
    })

    it('other URLs, POSTs and requests after the answer go on their own', async () => {
      const guard = undiciGuard({ coalesce: true, bulkheads: false })
      const dispatcher = new undici.Agent().compose(guard)
      const a = `/a/${major}`
      const b = `/b/${major}`
      await Promise.all([
        undici.request(url(a), { dispatcher }).then((r) => r.body.text()),
        undici.request(url(b), { dispatcher }).then((r) => r.body.text()),
        undici.request(url(a), { dispatcher, method: 'POST', body: 'x' }).then((r) => r.body.text()),
      ])
      await undici.request(url(a), { dispatcher }).then((r) => r.body.text())
      expect([hits.get(a), hits.get(b)]).toEqual([3, 1])
      guard.close()
    })

    it('a caller that aborts leaves the call; the others still get the answer', async () => {
      const guard = undiciGuard({ coalesce: true, bulkheads: false })
      const dispatcher = new undici.Agent().compose(guard)
      const path = `/abort/${major}`
      const controller = new AbortController()
      const leaving = undici.request(url(path), { dispatcher, signal: controller.signal })
      const staying = undici.request(url(path), { dispatcher }).then((r) => r.body.text())
      controller.abort()
      await expect(leaving).rejects.toThrow()
      expect((await staying).startsWith(`${path} #1 `)).toBe(true)
      expect(hits.get(path)).toBe(1)
      guard.close()
    })
  })
}
