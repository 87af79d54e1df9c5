import { sha256 } from '../common/sha256'

// Characters a region name may hold; '.' is kept out of the readable part so it only ever separates.
const unsafe = /[^A-Za-z0-9_-]/g
const READABLE_CHARS = 32

/**
 * The `shared` name of one key's breaker in a shared group: the group's name, a readable prefix of the key, and a
 * hash of the whole key (so that keys differing only in unsafe characters or past the prefix never meet). The same
 * in every process, so every worker of the host finds the same breaker for a key.
 */
export function keySharedName(group: string, key: string): string {
  const readable = key.replace(unsafe, '_').slice(0, READABLE_CHARS)
  const hash = sha256(key, 'base64url').slice(0, 12)
  return `${group}.${readable}.${hash}`
}
