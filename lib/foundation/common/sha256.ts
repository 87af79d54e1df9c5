import type { BinaryToTextEncoding } from 'crypto'

// crypto is required at the first hash, not when bulwark loads: it costs a process about 2.5 MB and more than 10 ms
// (docs/guide/install.md, "Entry points and what loading costs"), and only a long key, a shared keyed group's names
// and a derived namespace are hashed.
let crypto: typeof import('crypto') | undefined

/** The SHA-256 of `text` (UTF-8), in `encoding`. */
export function sha256(text: string, encoding: BinaryToTextEncoding): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  crypto ??= require('crypto') as typeof import('crypto')
  return crypto.createHash('sha256').update(text).digest(encoding)
}

/** The HMAC-SHA-256 of `text` (UTF-8) under `secret`, in `encoding`. */
export function hmacSha256(secret: Uint8Array, text: string, encoding: BinaryToTextEncoding): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  crypto ??= require('crypto') as typeof import('crypto')
  return crypto.createHmac('sha256', secret).update(text).digest(encoding)
}
