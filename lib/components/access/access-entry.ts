// One entry of an access list, as an operator writes it and as the list stores it (docs/rules/access-lists.md):
// a CIDR range (`10.0.0.0/8`, `2001:db8::/32`), a single address (`203.0.113.7`), or a key (`key:<text>`).
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { formatAddress, IPV4, IPV6, parseAddress } from './ip-address'

/** What an entry does to a request it matches: let it past every limit, or refuse it at once. */
export type AccessMode = 'allow' | 'deny'

/** Mode codes as stored (0: an empty slot). */
export const MODE: Readonly<Record<AccessMode, number>> = { allow: 1, deny: 2 }
export const MODE_NAMES: readonly (AccessMode | undefined)[] = [undefined, 'allow', 'deny']

/** Kinds of entry as stored. */
export const KIND_V4 = 4
export const KIND_V6 = 6
export const KIND_KEY = 75 // 'K'

/** The longest key an entry holds, in UTF-8 bytes (what a slot has room for). */
export const MAX_KEY_BYTES = 56

export interface ParsedEntry {
  kind: number
  /** The range's first address (one word for IPv4, four for IPv6); empty for a key. */
  words: number[]
  /** Prefix length in bits (32 or 128 for a single address). */
  prefix: number
  /** A key entry's key (without `key:`). */
  key: string
  /** The entry as the list shows it: the range without host bits, the address alone for one address. */
  text: string
}

const scratch = new Uint32Array(4)
const encoder = new TextEncoder()
const EXPECTED = `a CIDR range (10.0.0.0/8, 2001:db8::/32), an address, or key:<text> of 1-${MAX_KEY_BYTES} bytes`

/** Host bits of `words` below `prefix` (out of `bits`) that are set: none may be, so that no entry is ambiguous. */
function hostBitsSet(words: readonly number[], prefix: number): boolean {
  for (let i = 0; i < words.length; i++) {
    const kept = Math.min(32, Math.max(0, prefix - 32 * i))
    const mask = kept === 0 ? 0 : (0xffffffff << (32 - kept)) >>> 0
    if ((words[i] & ~mask) >>> 0 !== 0) return true
  }
  return false
}

/** Parses an entry's text; throws InvalidArgumentError (argument `entry`) when it is none. */
export function parseEntry(text: unknown): ParsedEntry {
  if (typeof text !== 'string') throw new InvalidArgumentError('entry', text, EXPECTED)
  if (text.startsWith('key:')) {
    const key = text.slice(4)
    const bytes = encoder.encode(key).length
    if (bytes === 0 || bytes > MAX_KEY_BYTES) throw new InvalidArgumentError('entry', text, EXPECTED)
    return { kind: KIND_KEY, words: [], prefix: 0, key, text }
  }
  const slash = text.indexOf('/')
  const address = slash < 0 ? text : text.slice(0, slash)
  const family = address.indexOf('%') >= 0 ? 0 : parseAddress(address, scratch)
  const mapped = family === IPV4 && address.indexOf(':') >= 0
  const bits = family === IPV4 ? 32 : 128
  let prefix = bits
  if (slash >= 0) {
    const digits = text.slice(slash + 1)
    prefix = /^(0|[1-9][0-9]{0,2})$/.test(digits) ? Number(digits) : -1
    // An IPv4-mapped range is written in IPv6 bits (::ffff:10.0.0.0/104): its IPv4 prefix is 96 fewer.
    if (mapped) prefix = prefix >= 96 ? prefix - 96 : -1
  }
  if (family === 0 || prefix < 0 || prefix > bits) throw new InvalidArgumentError('entry', text, EXPECTED)
  const words = family === IPV4 ? [scratch[0]] : Array.from(scratch)
  if (hostBitsSet(words, prefix)) {
    const network = words.map((w, i) => {
      const kept = Math.min(32, Math.max(0, prefix - 32 * i))
      return kept === 0 ? 0 : (w & ((0xffffffff << (32 - kept)) >>> 0)) >>> 0
    })
    const suggestion = `${formatAddress(family, network)}/${prefix}`
    throw new InvalidArgumentError('entry', text, `a range without host bits (${suggestion}?)`)
  }
  const shown = formatAddress(family, words)
  return {
    kind: family === IPV4 ? KIND_V4 : KIND_V6,
    words,
    prefix,
    key: '',
    text: prefix === bits ? shown : `${shown}/${prefix}`,
  }
}

/** Checks a mode (or null: remove the entry); throws InvalidArgumentError (argument `mode`) otherwise. */
export function checkMode(mode: unknown): number {
  if (mode === null) return 0
  const code = typeof mode === 'string' ? MODE[mode as AccessMode] : undefined
  if (code === undefined || !Object.hasOwn(MODE, mode as string))
    throw new InvalidArgumentError('mode', mode, "'allow' or 'deny', or null to remove the entry")
  return code
}

export { IPV4, IPV6 }
