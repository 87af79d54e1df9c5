// Gray routing in undiciGuard: a real pair of local HTTP servers (stable and v2); a GrayRouter picks each request's
// group and the request goes to that group's origin, whose breaker then counts it; rules changed live move traffic.
import * as http from 'http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { GrayRouter } from '../../lib/components/routing/gray-router'
import { undiciGuard } from '../../lib/adapters/undici/undici-guard'
import { serving, type TestServer } from '../integrations/inbound-scenarios'
import { undiciMajors } from '../integrations/undici-majors'
import { fieldOf } from '../helpers/typed-errors'

let stable: TestServer
let v2: TestServer
beforeAll(async () => {
  const answer = (name: string) => (req: http.IncomingMessage, res: http.ServerResponse) =>
    res.end(`${name} ${req.headers.host ?? ''}`)
  stable = await serving(http.createServer(answer('stable')).listen(0, '127.0.0.1'))
  v2 = await serving(http.createServer(answer('v2')).listen(0, '127.0.0.1'))
})
afterAll(async () => {
  await stable.close()
  await v2.close()
})

for (const { major, undici } of undiciMajors) {
  describe(`undiciGuard routing (undici ${major})`, () => {
    const origins = () => ({ stable: `http://127.0.0.1:${stable.port}`, v2: `http://127.0.0.1:${v2.port}` })

    it('x-version: v2 at weight 100 reaches v2, others stable; rules changed live move traffic', async () => {
      const router = new GrayRouter({
        groups: ['stable', 'v2'],
        fallback: 'stable',
        rules: [{ when: 'header(x-version) = v2 && weight = 100', group: 'v2' }],
      })
      const guard = undiciGuard({ routing: { router, origins: origins() }, bulkheads: false })
      const dispatcher = new undici.Agent().compose(guard)
      const get = async (headers: Record<string, string> = {}, path = '/') =>
        (await (await undici.request(`${origins().stable}${path}`, { dispatcher, headers })).body.text()).split(' ')[0]
      expect(await get({ 'x-version': 'v2' })).toBe('v2')
      expect(await get({ 'X-Version': 'v2' })).toBe('v2')
      expect(await get()).toBe('stable')
      expect(await get({ 'x-version': 'v1' })).toBe('stable')
      // The request went to v2's origin: its breaker counted it, stable's did not see the v2 calls.
      expect(guard.breakers.get(origins().v2)?.stats()).toMatchObject({ accepts: 2 })

      router.configure([{ when: 'path ^= /api/', group: 'v2' }])
      expect(await get({ 'x-version': 'v2' })).toBe('stable')
      expect(await get({}, '/api/items')).toBe('v2')
      router.configure([])
      expect(await get({}, '/api/items')).toBe('stable')
      expect(router.stats().routed).toEqual({ stable: 4, v2: 3 })
      guard.close()
      router.close()
      await dispatcher.close()
    })

    it('with a key from the request, a weight keeps each client in its group', async () => {
      const router = new GrayRouter({
        groups: ['stable', 'v2'],
        fallback: 'stable',
        rules: [{ when: 'weight = 50', group: 'v2' }],
        random: () => {
          throw new Error('the key decides')
        },
      })
      const key = (opts: { headers?: unknown }) => (opts.headers as Record<string, string>)['x-user']
      const guard = undiciGuard({ routing: { router, origins: origins(), key }, bulkheads: false })
      const dispatcher = new undici.Agent().compose(guard)
      const groupOf = async (user: string) =>
        (await (await undici.request(origins().stable, { dispatcher, headers: { 'x-user': user } })).body.text()).split(
          ' ',
        )[0]
      const first = await Promise.all(Array.from({ length: 20 }, (_, i) => groupOf(`u${i}`)))
      const again = await Promise.all(Array.from({ length: 20 }, (_, i) => groupOf(`u${i}`)))
      expect(again).toEqual(first)
      expect(first).toEqual(Array.from({ length: 20 }, (_, i) => router.route({}, `u${i}`)))
      expect(new Set(first)).toEqual(new Set(['stable', 'v2']))
      guard.close()
      router.close()
      await dispatcher.close()
    })
  })
}

describe('undiciGuard routing options', () => {
  it('refuses a router without route(), an origin that is not one, and a group without an origin', () => {
    const router = new GrayRouter({ groups: ['stable', 'v2'], fallback: 'stable' })
    expect(fieldOf(() => undiciGuard({ routing: { router: {} as GrayRouter, origins: {} } }))).toBe('routing.router')
    expect(fieldOf(() => undiciGuard({ routing: { router, origins: { stable: 'nope', v2: 'http://a:1' } } }))).toBe(
      'routing.origins.stable',
    )
    expect(() => undiciGuard({ routing: { router, origins: { stable: 'http://a:1' } } })).toThrow(/missing: v2/)
    expect(fieldOf(() => undiciGuard({ routing: { router, origins: {}, key: 1 as never } }))).toBe('routing.key')
    router.close()
  })
})
