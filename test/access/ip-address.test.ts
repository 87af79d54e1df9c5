// Client addresses and access-list entries as text (docs/rules/access-lists.md): what parses, to what, and what is
// refused.
import { describe, expect, it } from 'vitest'

import { parseEntry } from '../../lib/components/access/access-entry'
import { formatAddress, IPV4, IPV6, NOT_AN_ADDRESS, parseAddress } from '../../lib/components/access/ip-address'
import { InvalidArgumentError } from '../../lib/index'

const words = (address: unknown): [number, number[]] => {
  const out = new Uint32Array(4)
  const family = parseAddress(address, out)
  return [family, family === IPV4 ? [out[0]] : family === IPV6 ? Array.from(out) : []]
}

describe('parseAddress', () => {
  it('reads IPv4, IPv6 (compressed, full, with a zone or an embedded IPv4) and IPv4-mapped addresses', () => {
    expect(words('203.0.113.7')).toEqual([IPV4, [0xcb007107]])
    expect(words('0.0.0.0')).toEqual([IPV4, [0]])
    expect(words('255.255.255.255')).toEqual([IPV4, [0xffffffff]])
    expect(words('::ffff:203.0.113.7')).toEqual([IPV4, [0xcb007107]])
    expect(words('::FFFF:cb00:7107')).toEqual([IPV4, [0xcb007107]])
    expect(words('2001:db8::1')).toEqual([IPV6, [0x20010db8, 0, 0, 1]])
    expect(words('2001:DB8:0:0:0:0:0:1')).toEqual([IPV6, [0x20010db8, 0, 0, 1]])
    expect(words('fe80::1%eth0')).toEqual([IPV6, [0xfe800000, 0, 0, 1]])
    expect(words('::')).toEqual([IPV6, [0, 0, 0, 0]])
    expect(words('::1')).toEqual([IPV6, [0, 0, 0, 1]])
    expect(words('1::')).toEqual([IPV6, [0x10000, 0, 0, 0]])
    expect(words('1:2:3:4:5:6:1.2.3.4')).toEqual([IPV6, [0x10002, 0x30004, 0x50006, 0x01020304]])
    expect(words('64:ff9b::192.0.2.33')).toEqual([IPV6, [0x0064ff9b, 0, 0, 0xc0000221]])
  })

  it('refuses what is no address, whatever a forwarded header could carry', () => {
    const bad = ['', '1.2.3', '1.2.3.4.5', '01.2.3.4', '256.1.1.1', '1.2.3.4 ', ' 1.2.3.4', 'x', '1:2:3:4:5:6:7:8:9']
    bad.push(':1::', '1::2::3', '1:2:', ':::', '12345::', '::g', '1:2:3:4:5:6:7:1.2.3.4', '::1.2.3', 'a'.repeat(65))
    for (const address of [...bad, undefined, null, 42, {}])
      expect(words(address), String(address)[0]).toEqual([NOT_AN_ADDRESS, []])
  })

  it('formats addresses back, IPv6 in its shortest form (RFC 5952)', () => {
    expect(formatAddress(IPV4, [0xcb007107])).toBe('203.0.113.7')
    expect(formatAddress(IPV6, [0x20010db8, 0, 0, 1])).toBe('2001:db8::1')
    expect(formatAddress(IPV6, [0x20010db8, 0, 1, 0])).toBe('2001:db8::1:0:0')
    expect(formatAddress(IPV6, [0x20010000, 0x00010000, 0, 1])).toBe('2001:0:1::1')
    expect(formatAddress(IPV6, [0, 0, 0, 0])).toBe('::')
  })
})

describe('parseEntry', () => {
  it('takes ranges, single addresses and keys, and shows each without host bits', () => {
    expect(parseEntry('10.0.0.0/8')).toMatchObject({ kind: 4, prefix: 8, text: '10.0.0.0/8' })
    expect(parseEntry('10.1.2.3')).toMatchObject({ kind: 4, prefix: 32, text: '10.1.2.3' })
    expect(parseEntry('10.1.2.3/32')).toMatchObject({ kind: 4, prefix: 32, text: '10.1.2.3' })
    expect(parseEntry('0.0.0.0/0')).toMatchObject({ kind: 4, prefix: 0, text: '0.0.0.0/0' })
    expect(parseEntry('2001:DB8::/32')).toMatchObject({ kind: 6, prefix: 32, text: '2001:db8::/32' })
    // An IPv4-mapped range is an IPv4 range: its prefix counts IPv4 bits.
    expect(parseEntry('::ffff:10.0.0.0/104')).toMatchObject({ kind: 4, prefix: 8, text: '10.0.0.0/8' })
    expect(parseEntry('key:partner-7')).toMatchObject({ key: 'partner-7', text: 'key:partner-7' })
  })

  it('refuses host bits (suggesting the range), bad prefixes, zones and oversized keys, naming the entry', () => {
    const refused = (text: unknown) => {
      try {
        parseEntry(text)
      } catch (error) {
        return error instanceof InvalidArgumentError ? error.message : `another error: ${String(error)}`
      }
      return 'accepted'
    }
    expect(refused('10.1.2.3/8')).toMatch(/10\.0\.0\.0\/8\?/)
    expect(refused('2001:db8::1/32')).toMatch(/2001:db8::\/32\?/)
    for (const bad of ['10.0.0.0/33', '10.0.0.0/08', '10.0.0.0/', '::/129', '::ffff:10.0.0.0/95', 'fe80::1%eth0'])
      expect(refused(bad), bad).toMatch(/CIDR range/)
    expect(refused('key:')).toMatch(/key:<text>/)
    expect(refused(`key:${'é'.repeat(29)}`)).toMatch(/1-56 bytes/)
    expect(refused(7)).toMatch(/CIDR range/)
  })
})
