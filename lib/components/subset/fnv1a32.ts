import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

/** FNV-1a 32's starting state. */
export const FNV_OFFSET_BASIS = 0x811c9dc5
const PRIME = 0x01000193

/** Continues an FNV-1a 32 hash over the UTF-8 bytes of `text` (as Go hashes a string's bytes). Returns an int32. */
export function fnv1a32Update(hash: number, text: string): number {
  const length = text.length
  for (let i = 0; i < length; i++) {
    let c = text.charCodeAt(i)
    if (c < 0x80) {
      hash = Math.imul(hash ^ c, PRIME)
      continue
    }
    if (c < 0x800) {
      hash = Math.imul(hash ^ (0xc0 | (c >> 6)), PRIME)
      hash = Math.imul(hash ^ (0x80 | (c & 0x3f)), PRIME)
      continue
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < length) {
      const low = text.charCodeAt(i + 1)
      if (low >= 0xdc00 && low <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00)
        hash = Math.imul(hash ^ (0xf0 | (cp >> 18)), PRIME)
        hash = Math.imul(hash ^ (0x80 | ((cp >> 12) & 0x3f)), PRIME)
        hash = Math.imul(hash ^ (0x80 | ((cp >> 6) & 0x3f)), PRIME)
        hash = Math.imul(hash ^ (0x80 | (cp & 0x3f)), PRIME)
        i++
        continue
      }
    }
    // A lone surrogate becomes U+FFFD, as TextEncoder and Buffer encode it.
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd
    hash = Math.imul(hash ^ (0xe0 | (c >> 12)), PRIME)
    hash = Math.imul(hash ^ (0x80 | ((c >> 6) & 0x3f)), PRIME)
    hash = Math.imul(hash ^ (0x80 | (c & 0x3f)), PRIME)
  }
  return hash
}

/** FNV-1a 32 of the UTF-8 bytes of `text`, as an unsigned 32-bit number (Go's hash/fnv New32a gives the same). */
export function fnv1a32(text: string): number {
  if (typeof text !== 'string') throw new InvalidArgumentError('text', text, 'a string')
  return fnv1a32Update(FNV_OFFSET_BASIS, text) >>> 0
}
