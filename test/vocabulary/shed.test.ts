import { describe, expect, it } from 'vitest'

import { Shed, shedReason } from '../../lib/index'
import { shedReply } from '../../lib/guards/inbound/shed-reply'

describe('the Shed table', () => {
  it('gives every code one reason, as docs/vocabulary.md lists them', () => {
    expect(Object.entries(Shed).map(([name, code]) => [name, code, shedReason(code)])).toEqual([
      ['inFlight', -1, 'in-flight'],
      ['queueDelay', -2, 'queue-delay'],
      ['rateLimit', -3, 'rate-limit'],
      ['latency', -4, 'latency'],
      ['keyConcurrency', -5, 'key-concurrency'],
      ['deadline', -6, 'deadline'],
      ['forced', -7, 'forced'],
      ['queueTimeout', -8, 'queue-timeout'],
      ['connectionConcurrency', -9, 'connection-concurrency'],
      ['denied', -10, 'denied'],
      ['banned', -11, 'banned'],
    ])
  })

  it('names nothing that is not a shed code, and never throws', () => {
    for (const value of [0, 7, -12, -1.5, Number.NaN, '−1', Symbol('x'), undefined])
      expect(shedReason(value as never)).toBeUndefined()
  })

  it("answers a rate limit, a key's or a connection's concurrency limit and a ban with 429, a deny entry with 403, every other reason with 503 naming it", () => {
    expect([shedReply(Shed.denied).status, JSON.parse(shedReply(Shed.denied).body)]).toEqual([
      403,
      { error: 'forbidden' },
    ])
    expect([shedReply(Shed.banned).status, JSON.parse(shedReply(Shed.banned).body)]).toEqual([429, { error: 'banned' }])
    expect(shedReply(Shed.rateLimit).status).toBe(429)
    expect(shedReply(Shed.keyConcurrency).status).toBe(429) // the client is over its own share
    expect(shedReply(Shed.connectionConcurrency).status).toBe(429)
    const clients: number[] = [
      Shed.rateLimit,
      Shed.keyConcurrency,
      Shed.connectionConcurrency,
      Shed.denied,
      Shed.banned,
    ]
    for (const code of Object.values(Shed).filter((c) => !clients.includes(c))) {
      const reply = shedReply(code)
      expect(reply.status).toBe(503)
      expect(JSON.parse(reply.body)).toEqual({ error: 'overloaded', reason: shedReason(code) })
    }
    expect(shedReply(-99)).toBe(shedReply(Shed.inFlight))
  })
})
