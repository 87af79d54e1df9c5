// Client addresses as numbers (docs/rules/access-lists.md): an IPv4 address is one 32-bit word, an IPv6 address
// four, most significant first. An IPv4-mapped IPv6 address (::ffff:a.b.c.d, how a dual-stack socket reports an
// IPv4 client) is its IPv4 address. The hot path parses a string into a caller's Uint32Array without allocating.

export const NOT_AN_ADDRESS = 0
export const IPV4 = 4
export const IPV6 = 6

const MAX_LENGTH = 64 // the longest text form with a zone that a socket reports is shorter
const groups = new Uint16Array(8) // scratch: an IPv6 address's groups as they are read

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  const lower = c | 32
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

/** The IPv4 address in `s` from `from` to `to` (exclusive) as a 32-bit number, or -1. */
function parseIpv4(s: string, from: number, to: number): number {
  let value = 0
  let octet = 0
  let digits = 0
  let dots = 0
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1
      value = value * 256 + octet
      octet = 0
      digits = 0
    } else if (c >= 48 && c <= 57) {
      // No leading zero: "010" is octal to some parsers and decimal to others, so it is no address here.
      if (digits > 0 && octet === 0) return -1
      octet = octet * 10 + (c - 48)
      if (++digits > 3 || octet > 255) return -1
    } else return -1
  }
  if (digits === 0 || dots !== 3) return -1
  return value * 256 + octet
}

/** Reads the IPv6 address in `s[0, end)` into `groups`; false if malformed. */
function parseGroups(s: string, end: number): boolean {
  let count = 0
  let gap = -1
  let value = 0
  let digits = 0
  let i = 0
  if (end >= 2 && s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return false
    gap = 0
    i = 2
  }
  for (; i < end; i++) {
    const c = s.charCodeAt(i)
    if (c === 58) {
      if (digits === 0) {
        if (gap >= 0 || i === 0 || s.charCodeAt(i - 1) !== 58) return false
        gap = count // '::' after a group
        continue
      }
      if (count === 8) return false
      groups[count++] = value
      value = 0
      digits = 0
      if (i + 1 === end) return false // a trailing single ':'
    } else if (c === 46) {
      // An embedded IPv4 address ends the text: it stands for the last two groups.
      const start = i - digits
      const v4 = parseIpv4(s, start, end)
      if (v4 < 0 || count > 6) return false
      groups[count++] = Math.floor(v4 / 65536)
      groups[count++] = v4 & 0xffff
      digits = 0
      break
    } else {
      const d = hexDigit(c)
      if (d < 0 || ++digits > 4) return false
      value = value * 16 + d
    }
  }
  if (digits > 0) {
    if (count === 8) return false
    groups[count++] = value
  }
  if (gap < 0) return count === 8
  if (count > 7) return false
  // Move the groups after '::' to the end and zero the ones it stands for.
  const tail = count - gap
  for (let k = 1; k <= tail; k++) groups[8 - k] = groups[count - k]
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0
  return true
}

/**
 * Parses a client address (as a socket or a framework reports it: `203.0.113.7`, `2001:db8::1`, `fe80::1%eth0`,
 * `::ffff:203.0.113.7`) into `out`: IPV4 with the address in out[0], IPV6 with four words in out[0..3], or
 * NOT_AN_ADDRESS. Never throws or allocates.
 */
export function parseAddress(address: unknown, out: Uint32Array): number {
  if (typeof address !== 'string') return NOT_AN_ADDRESS
  const length = address.length
  if (length === 0 || length > MAX_LENGTH) return NOT_AN_ADDRESS
  if (address.indexOf(':') < 0) {
    const v4 = parseIpv4(address, 0, length)
    if (v4 < 0) return NOT_AN_ADDRESS
    out[0] = v4
    return IPV4
  }
  const zone = address.indexOf('%')
  if (!parseGroups(address, zone < 0 ? length : zone)) return NOT_AN_ADDRESS
  const g = groups
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    out[0] = g[6] * 65536 + g[7]
    return IPV4
  }
  out[0] = g[0] * 65536 + g[1]
  out[1] = g[2] * 65536 + g[3]
  out[2] = g[4] * 65536 + g[5]
  out[3] = g[6] * 65536 + g[7]
  return IPV6
}

/** An address's words as text: dotted for IPv4, RFC 5952's shortest form for IPv6. */
export function formatAddress(family: number, words: ArrayLike<number>): string {
  if (family === IPV4) {
    const w = words[0]
    return [w >>> 24, (w >>> 16) & 255, (w >>> 8) & 255, w & 255].join('.')
  }
  const g: number[] = []
  for (let i = 0; i < 4; i++) g.push(words[i] >>> 16, words[i] & 0xffff)
  // The longest run of two or more zero groups (the first of equal runs) becomes '::'.
  let best = -1
  let bestLength = 1
  for (let i = 0; i < 8;) {
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLength) {
      best = i
      bestLength = j - i
    }
    i = j === i ? i + 1 : j
  }
  const hex = (from: number, to: number) =>
    g
      .slice(from, to)
      .map((x) => x.toString(16))
      .join(':')
  return best < 0 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLength, 8)}`
}
