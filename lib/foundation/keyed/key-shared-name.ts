import { hmacSha256 } from '../common/sha256'
import { native } from '../native/load-native'
import { defaultNamespace } from '../regions/namespace'
import { RegionLayout } from '../regions/region-layout'
import { SharedRegion } from '../regions/shared-region'

/** Members the names' secret region takes: every process of the host that names a key's region opens it once. */
const SECRET_MEMBERS = 1024
let secret: Buffer | undefined
// Kept open for the life of the process: the secret lives as long as some process of the host has it.
let secretRegion: SharedRegion | undefined

/**
 * The host's secret for key names (docs/guide/trust.md, "Keys that come from requests"): 128 random bits in a region
 * of this user and application (`key-names.<namespace>.secret`), made by the first process that needs it and gone
 * with the last; every process of the host reads the same one.
 */
function hostSecret(): Buffer {
  if (secret !== undefined) return secret
  const layout = new RegionLayout('key-names', SECRET_MEMBERS).describe('v1 secret=128')
  const words = [...native.keyedSeed(), ...native.keyedSeed()]
  const cells = words.map((word) => layout.cell(word))
  secretRegion = SharedRegion.forComponent('secret', layout, defaultNamespace())
  const region = secretRegion
  secret = Buffer.alloc(16)
  cells.forEach((cell, i) => secret!.writeUInt32LE(region.f64[(region.base + cell) / 8] >>> 0, i * 4))
  return secret
}

/**
 * The `shared` name of one key's component in a shared keyed collection: the group's name and 96 bits of an HMAC of
 * the key under the host's secret. The same in every process of the host, so every worker finds the same component
 * for a key; no key, nor anything another local user could test a guessed key against, appears in a file name.
 */
export function keySharedName(group: string, key: string): string {
  const hash = hmacSha256(hostSecret(), key, 'base64url').slice(0, 16)
  return `${group}.${hash}`
}
