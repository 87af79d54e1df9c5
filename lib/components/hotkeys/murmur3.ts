import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { native } from '../../foundation/native/load-native'

/**
 * MurmurHash3 x86_32 of a key's bytes (a string's UTF-8, or a Uint8Array as is): the hash HeavyKeeper uses
 * (fingerprint = seed 0, row i = seed i), equal to Go's murmur3.SeedSum32(seed, key).
 */
export function murmur3(key: string | Uint8Array, seed = 0): number {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new InvalidArgumentError('seed', seed, 'an integer in [0, 2^32 - 1]')
  }
  const hash = native.murmur3(key, seed)
  if (hash < 0) throw new InvalidArgumentError('key', key, 'a string or a Uint8Array')
  return hash
}
