// Regressions found by the reliability fuzzing: errors that blamed `options` instead of the nested option at fault,
// and a rate-limited request whose address is not a string making acquire() throw.
import type { IncomingMessage } from 'http'
import { describe, expect, it } from 'vitest'

import { BbrLimiter } from '../../lib/components/bbr/bbr-limiter'
import { httpGuard } from '../../lib/adapters/http/http'
import { undiciGuard } from '../../lib/adapters/undici/undici-guard'
import { KeyedLimiter } from '../../lib/components/ratelimit/keyed-limiter'
import { TokenBucket } from '../../lib/components/ratelimit/token-bucket'
import { fieldOf } from '../helpers/typed-errors'

describe('adapters with bad options or requests', () => {
  it('a `breaker` that is not an options object is blamed as `breaker`', () => {
    expect(fieldOf(() => undiciGuard({ breaker: '' as never }))).toBe('breaker')
    expect(fieldOf(() => undiciGuard({ breaker: 0 as never }))).toBe('breaker')
  })

  it('a `limiter` given as a byte array is blamed as `limiter`, and options that are a byte array as `options`', () => {
    expect(fieldOf(() => httpGuard(() => undefined, { limiter: new Uint8Array(2) as never }))).toBe('limiter')
    expect(fieldOf(() => new BbrLimiter(new Uint8Array(2) as never))).toBe('options')
  })

  it('a request whose address is not a string is rate-limited under the key "unknown", without throwing', () => {
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now: () => 0 }))
    const guarded = httpGuard(() => undefined, { limiter: false, rateLimit: { limiter: keyed } })
    const req = (address: unknown) =>
      ({ headers: {}, socket: { remoteAddress: address } }) as unknown as IncomingMessage
    expect(guarded.guard.tryAcquire(req({ ip: 1 }))).toBe(0)
    expect(guarded.guard.tryAcquire(req(42))).toBeLessThan(0) // the same key: 'unknown'
    expect(keyed.has('unknown')).toBe(true)
  })
})
