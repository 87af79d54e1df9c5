// The default rate-limit key of a request: its client's address, as the framework reports it. An IPv6 client
// usually holds a whole /64 (one customer's network), so its key is the /64: otherwise one client could rotate
// through 2^64 addresses, each with a fresh limit (docs/guide/trust.md).

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/
const MAX_ADDRESS_LENGTH = 64

/**
 * `2001:db8:1:2::/64` for any address in that /64; an IPv4-mapped IPv6 address as its IPv4 address; an IPv4
 * address as itself. Anything else (no address, or a malformed one, which a forwarded header could carry) is
 * 'unknown': one key for all of them, so that made-up addresses cannot each get a fresh limit.
 */
export function addressKey(address: unknown): string {
  if (typeof address !== 'string' || address.length > MAX_ADDRESS_LENGTH) return 'unknown'
  if (address.indexOf(':') < 0) return IPV4.test(address) ? address : 'unknown'
  return ipv6Prefix(address) ?? 'unknown'
}

/** The /64 of an IPv6 address (zone dropped), or its IPv4 address if it is IPv4-mapped; undefined if malformed. */
function ipv6Prefix(address: string): string | undefined {
  const zone = address.indexOf('%')
  const a = zone < 0 ? address : address.slice(0, zone)
  const lower = a.toLowerCase()
  if (lower.startsWith('::ffff:') && IPV4.test(lower.slice(7))) return lower.slice(7)
  const gap = a.indexOf('::')
  if (gap !== a.lastIndexOf('::')) return undefined
  const head = gap < 0 ? a.split(':') : a.slice(0, gap) === '' ? [] : a.slice(0, gap).split(':')
  const tail = gap < 0 ? [] : a.slice(gap + 2) === '' ? [] : a.slice(gap + 2).split(':')
  // An embedded IPv4 address at the end stands for two groups.
  const last = (gap < 0 ? head : tail).at(-1) ?? ''
  const groups = head.length + tail.length + (last.includes('.') ? 1 : 0)
  if (gap < 0 ? groups !== 8 : groups > 7) return undefined
  const full = gap < 0 ? head : [...head, ...Array<string>(8 - groups).fill('0'), ...tail]
  const prefix: string[] = []
  for (let i = 0; i < 4; i++) {
    if (!HEX_GROUP.test(full[i])) return undefined
    prefix.push(parseInt(full[i], 16).toString(16))
  }
  return `${prefix.join(':')}::/64`
}
