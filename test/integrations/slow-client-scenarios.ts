// Clients that do not read (issue 32, docs/guide/trust.md) through every inbound adapter, over real sockets: a
// token is released when the handler has finished its answer, not when the client has taken it; one connection
// holds at most `connectionConcurrency` admitted requests.
import { expect, it } from 'vitest'

import type { InboundGuardOptions } from '../../lib/entries/http'
import { waitFor } from '../helpers/wait-for'
import { type AppHandler, controlledLimiter, type ScenarioClient } from './inbound-scenarios'
import type { SlowClient } from './slow-clients'

const KIB = 1024

/** Registers the slow-client scenarios for one adapter; `open` starts its server with `handler` as the app. */
export function slowClientScenarios(
  open: (guard: InboundGuardOptions<any>, handler: AppHandler) => Promise<number>,
  client: ScenarioClient & { slow: SlowClient },
): void {
  const slow = client.slow

  it('a client that never reads holds no token once the handlers have answered', async () => {
    const { limiter } = controlledLimiter(1000)
    let calls = 0
    const { requests, answerBytes } = slow.unread
    const answer = 'x'.repeat(answerBytes)
    const port = await open({ limiter }, async () => {
      calls++
      return answer
    })
    const reader = await slow.neverReads(port, '/work', requests)
    try {
      await waitFor(() => calls === requests, { what: 'every request to reach the handler' })
      await waitFor(() => limiter.inFlight === 0, { what: 'the answered requests to give their tokens back' })
      expect(limiter.stats()).toMatchObject({ admitted: requests, invalidReleases: 0 })
    } finally {
      reader.close()
    }
    await waitFor(() => limiter.stats().invalidReleases === 0 && limiter.inFlight === 0)
    limiter.close()
  })

  it('a 10 MB answer read at 1 KB/s gives its token back when the handler ends it, long before the read would', async () => {
    const { limiter } = controlledLimiter(50)
    let calls = 0
    const answer = 'x'.repeat(10 * KIB * KIB)
    const port = await open({ limiter }, async () => {
      calls++
      return answer
    })
    const reader = slow.readsSlowly(port, '/work', KIB)
    try {
      await waitFor(() => calls === 1 && reader.received() > 0, { what: 'the client to start reading its answer' })
      await waitFor(() => limiter.inFlight === 0, { what: 'the token to come back while the client reads' })
      expect(reader.received()).toBeLessThan(answer.length / 100) // ~10 000 s to read it all
      expect(limiter.stats()).toMatchObject({ admitted: 1, invalidReleases: 0 })
    } finally {
      reader.close()
    }
    limiter.close()
  })

  it('one connection holds at most connectionConcurrency admitted requests; the others are refused, 429', async () => {
    const { limiter } = controlledLimiter(50)
    let calls = 0
    let letGo: () => void = () => undefined
    const gate = new Promise<void>((r) => (letGo = r))
    const port = await open({ limiter, connectionConcurrency: 3 }, async () => {
      if (++calls <= 3) await gate // the first connection's three requests wait
      return 'ok'
    })
    const first = slow.connect(port)
    const second = slow.connect(port)
    try {
      const batch = first.send(5)
      await waitFor(() => calls === 3, { what: 'three requests of the connection to reach the handler' })
      expect(limiter.inFlight).toBe(3)
      // Another connection is not held back by the first one's count.
      expect((await second.send(1)).map((r) => r.status)).toEqual([200])
      letGo()
      const replies = await batch
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429, 429])
      expect(JSON.parse(replies[3].body)).toEqual({ error: 'too many concurrent requests on one connection' })
      expect(replies[3].headers['retry-after']).toBe('1')
      // Each finished request gave its place on the connection back.
      await waitFor(() => limiter.inFlight === 0, { what: 'the tokens to come back' })
      expect((await first.send(3)).map((r) => r.status)).toEqual([200, 200, 200])
      expect(calls).toBe(7)
      expect(limiter.stats().invalidReleases).toBe(0)
    } finally {
      first.close()
      second.close()
    }
    limiter.close()
  })
}
