// Loaded at first use (scripts/pack-cjs.js): crypto costs a process about 2.5 MB (docs/guide/install.md), and
// only a key longer than MAX_KEY_LENGTH is hashed.
import { createHash } from 'crypto' // bulwark:lazy

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
  return `${prefix}#${createHash('sha256').update(key).digest('base64url').slice(0, 22)}`
}
