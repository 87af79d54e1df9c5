import { createHash } from 'crypto'

/** Keys longer than this (UTF-8 bytes) are stored as a hash of the key (docs/readme/ratelimit.md, "Keys"). */
export const MAX_KEY_BYTES = 200

/**
 * What stands for `key` in Redis and in the local maps: the key itself, or a 192-bit SHA-256 digest of it
 * (base64url, 32 characters) when it is longer than MAX_KEY_BYTES of UTF-8 (memory per key, in Redis and on the
 * host, stays bounded whatever a request sends), holds a '}' (which would end the cluster hash tag inside the key)
 * or is empty (an empty hash tag counts for nothing).
 */
export function boundedKey(key: string): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: short strings need no count, long ones no encoding.
  const short =
    key.length * 3 <= MAX_KEY_BYTES || (key.length <= MAX_KEY_BYTES && Buffer.byteLength(key) <= MAX_KEY_BYTES)
  if (short && key.length > 0 && key.indexOf('}') < 0) return key
  return createHash('sha256').update(key).digest('base64url').slice(0, 32)
}

/**
 * Builds Redis keys `<prefix>{<key>}:<what defines the limit>`. The limit's definition (algorithm, limit, window,
 * and burst for GCRA) is part of the key, so limiters with different limits on the same key never share state;
 * the key is the cluster hash tag, so every limit on one key lives on one shard. A hashed key adds ':h' after the
 * brace, which a plain key's form cannot produce (there the brace is followed by the algorithm's letter).
 */
export class RedisKeys {
  private readonly plainTail: string
  private readonly hashedTail: string

  constructor(
    private readonly prefix: string,
    definition: string,
  ) {
    this.plainTail = `}:${definition}`
    this.hashedTail = `}:h:${definition}`
  }

  /** The Redis key of `key`, given its bounded form (boundedKey: the key itself, or its digest). */
  of(key: string, bounded: string): string {
    return this.prefix + '{' + bounded + (bounded === key ? this.plainTail : this.hashedTail)
  }
}

/** The part of the key that says what the limit is: 's:<limit>:<window>' or 'g:<limit>:<window>:<burst>'. */
export function limitDefinition(algorithm: 'sliding-window' | 'gcra', limit: number, window: number, burst: number) {
  return algorithm === 'gcra' ? `g:${limit}:${window}:${burst}` : `s:${limit}:${window}`
}
