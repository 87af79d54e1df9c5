// Shadow mode behind every inbound adapter (docs/rules/shadow.md; inboundScenarios runs these): a guard whose limiter
// and rate limit are in shadow mode answers every request, its components count what they would have refused, and
// enforce again the moment the flag goes off.
import { expect, it } from 'vitest'

import { KeyedLimiter } from '../../lib/index'
import { type InboundGuardOptions } from '../../lib/entries/http'
import { controlledLimiter, type ScenarioClient } from './inbound-scenarios'

type Open = (guard: InboundGuardOptions<any>) => Promise<number>

const counted = (shadow: { wouldRefuse: Array<{ count: number }> } | undefined) =>
  (shadow?.wouldRefuse ?? []).reduce((sum, c) => sum + c.count, 0)

export function shadowScenarios(open: Open, calls: () => number, client: ScenarioClient): void {
  it('shadow mode: the limiter and rate limit admit what they would refuse, counted apart; off, they refuse', async () => {
    const c = controlledLimiter(2)
    const perClient = new KeyedLimiter({ rate: 0.001, burst: 1 })
    try {
      c.limiter.configure({ shadow: true })
      perClient.configure({ shadow: true })
      const port = await open({ limiter: c.limiter, rateLimit: { limiter: perClient, key: () => 'one' } })
      c.hold(3)
      c.signal.load = 900
      const replies = await Promise.all(Array.from({ length: 3 }, () => client.get(port)))
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200])
      expect(calls()).toBe(3)
      const s = c.limiter.stats()
      expect(s.shedInFlight).toBe(0)
      expect(counted(s.rules.shadow)).toBe(3)
      expect(counted(perClient.stats().table?.rules.shadow)).toBe(2)
      c.limiter.configure({ shadow: false })
      expect((await client.get(port)).status).toBe(503)
      perClient.configure({ shadow: false })
      expect((await client.get(port)).status).toBe(429)
      expect(calls()).toBe(3)
    } finally {
      c.releaseHeld()
      c.limiter.close()
      perClient.close()
    }
  })
}
