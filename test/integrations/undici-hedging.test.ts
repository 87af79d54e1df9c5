import * as http from 'http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { undiciGuard } from '../../lib/adapters/undici/undici-guard'
import { RetryBudget } from '../../lib/components/resilience/retry-budget'
import { serving, type TestServer } from './inbound-scenarios'
import { undiciMajors } from './undici-majors'

// /fast answers at once; /stuck/<id> never answers its first hit (the hedge, its second, is answered at once).
let origin: TestServer
const hits = new Map<string, number>()
let closedEarly = 0
beforeAll(async () => {
  const server = http.createServer((req, res) => {
    const path = req.url ?? ''
    const n = (hits.get(path) ?? 0) + 1
    hits.set(path, n)
    if (path.startsWith('/stuck/') && n === 1) {
      res.on('close', () => closedEarly++)
      return
    }
    res.end(`${path} #${n}`)
  })
  origin = await serving(server.listen(0, '127.0.0.1'))
})
afterAll(async () => {
  await origin.close()
})

for (const { major, undici } of undiciMajors) {
  describe(`undiciGuard hedging (undici ${major})`, () => {
    const url = (path: string) => `http://127.0.0.1:${origin.port}${path}`

    async function warmed(budget?: RetryBudget) {
      const guard = undiciGuard({ hedging: { minSamples: 20 }, bulkheads: false, budget })
      const dispatcher = new undici.Agent().compose(guard)
      for (let i = 0; i < 40; i++) await (await undici.request(url('/fast'), { dispatcher })).body.text()
      return { guard, dispatcher }
    }

    it('a call slower than its origin’s p95 gets a second attempt, which answers; the first is aborted', async () => {
      const { guard, dispatcher } = await warmed()
      const path = `/stuck/${major}-a`
      const before = closedEarly
      const body = await (await undici.request(url(path), { dispatcher })).body.text()
      expect(body).toBe(`${path} #2`)
      expect(hits.get(path)).toBe(2)
      await new Promise<void>((resolve) => {
        const check = () => (closedEarly > before ? resolve() : setTimeout(check, 5))
        check()
      })
      guard.close()
    })

    it('no hedge for a request that is not replayable, nor beyond the budget', async () => {
      const budget = new RetryBudget({ ratio: 0, minPerSecond: 0 })
      const { guard, dispatcher } = await warmed(budget)
      const path = `/stuck/${major}-b`
      const controller = new AbortController()
      const call = undici.request(url(path), { dispatcher, signal: controller.signal })
      await new Promise((r) => setTimeout(r, 200)) // far past the p95 of /fast
      expect(hits.get(path)).toBe(1)
      controller.abort()
      await expect(call).rejects.toThrow()
      guard.close()
      budget.close()
    })
  })
}
