import { sha256 } from './sha256'

/** Longest key kept whole (UTF-16 units); a longer one is kept as a prefix and a hash (docs/guide/trust.md). */
export const MAX_KEY_LENGTH = 128
const PREFIX_LENGTH = 64

/**
 * A key from a request, bounded: itself when short, else its first 64 units, `#` and 22 characters of its SHA-256
 * (base64url: 132 bits), so that a client sending megabyte keys costs a few dozen bytes per key, and two long keys
 * that differ anywhere stay two keys. The prefix is copied, never a slice that would keep the long key alive.
 */
export function boundedKey(key: string): string {
  if (typeof key !== 'string' || key.length <= MAX_KEY_LENGTH) return key
  const prefix = Buffer.from(key.slice(0, PREFIX_LENGTH), 'utf16le').toString('utf16le')
  return `${prefix}#${sha256(key, 'base64url').slice(0, 22)}`
}
