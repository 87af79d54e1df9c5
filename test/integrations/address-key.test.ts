// The default rate-limit key of a request (issue 13 item 7, docs/guide/trust.md): an IPv6 client is keyed by its
// /64, so that rotating through the addresses of its network gives it no fresh limit.
import { describe, expect, it } from 'vitest'

import { httpGuard } from '../../lib/entries/http'
import { KeyedLimiter, Shed, TokenBucket } from '../../lib/index'
import { addressKey } from '../../lib/guards/inbound/address-key'

describe('addressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:1::', '2001:db8:1:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['64:ff9b::203.0.113.7', '64:ff9b:0:0::/64'],
    ['2001:db8:1:2:3:4:203.0.113.7', '2001:db8:1:2::/64'],
  ])('%s -> %s', (address, key) => {
    expect(addressKey(address)).toBe(key)
  })

  it.each([
    undefined,
    42,
    '',
    'not an address',
    '1.2.3.4.5',
    '2001:db8::1::2',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3',
    'g::1',
    '12345::1',
    `2001:db8::${'1:'.repeat(40)}1`,
    `${'9'.repeat(70)}`,
  ])('%s (not an address) -> unknown', (address) => {
    expect(addressKey(address)).toBe('unknown')
  })
})

describe('the default key of httpGuard’s rate limit', () => {
  const request = (remoteAddress: string) => ({ headers: {}, socket: { remoteAddress } }) as never

  it('one limit per IPv6 /64: a client rotating through its network’s addresses has no fresh limit', () => {
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 0.001, burst: 1, now: () => 0 }))
    const listener = httpGuard(() => undefined, { limiter: false, rateLimit: { limiter: perClient } })
    const guard = listener.guard
    expect(guard.tryAcquire(request('2001:db8:1:2::1'))).toBeGreaterThanOrEqual(0)
    let admitted = 0
    const askedAgain = new Set<number>() // what a refused address gets when it asks again at once
    for (let i = 0; i < 1000; i++) {
      const host = `2001:db8:1:2:${(i * 7919).toString(16)}:${i.toString(16)}:0:1`
      if (guard.tryAcquire(request(host)) >= 0) admitted++
      else askedAgain.add(guard.tryAcquire(request(host)))
    }
    expect(admitted).toBe(0) // before: 1000, each address a new key
    expect([...askedAgain]).toEqual([Shed.rateLimit])
    expect(perClient.size).toBe(1)
    // Another /64 is another client; an IPv4 client and its IPv4-mapped form are one.
    expect(guard.tryAcquire(request('2001:db8:1:3::1'))).toBeGreaterThanOrEqual(0)
    expect(guard.tryAcquire(request('203.0.113.7'))).toBeGreaterThanOrEqual(0)
    expect(guard.tryAcquire(request('::ffff:203.0.113.7'))).toBe(Shed.rateLimit)
    guard.close()
  })
})
