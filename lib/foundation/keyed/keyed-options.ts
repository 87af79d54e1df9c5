import { InvalidOptionError } from '../errors/invalid-option-error'
import type { SharingOptions } from '../regions/sharing-options'
import { type Clock, coarseNow } from '../signals/clock'
import { checkSharedName, optionalFunction, optionalNumber } from '../common/validate'

/**
 * What every keyed collection (KeyedPool, and KeyedLimiter, BreakerGroup, BulkheadPool built on it) takes about its
 * bounds. `shared` names the collection: each key's component gets its own shared name, derived from it, that the
 * factory passes on (the components' other sharing options, such as `maxMembers`, are the factory's).
 */
export interface KeyedOptions extends Pick<SharingOptions, 'shared' | 'now'> {
  /** Most keys held at once (default 1000; KeyedLimiter 10 000). Memory never grows past it. */
  maxKeys?: number
  /** A key at rest and unused for this long (ms) is dropped when room is needed (default 60 000). */
  idleTimeout?: number
}

export interface ResolvedKeyedOptions {
  maxKeys: number
  idleTimeout: number
  shared: string | undefined
  now: Clock
}

/**
 * Longest `shared` name of a keyed collection: each key's component is named `<shared>.<an HMAC of the key>`
 * (keySharedName), which must stay within a region name.
 */
export const MAX_GROUP_NAME = 64

/** Validates a keyed collection's bounds, shared name and clock, once. */
export function resolveKeyedOptions(o: KeyedOptions, defaultMaxKeys = 1000): ResolvedKeyedOptions {
  const maxKeys = optionalNumber('maxKeys', o.maxKeys, defaultMaxKeys, { integer: true, min: 1, max: 1e7 })
  const idleTimeout = optionalNumber('idleTimeout', o.idleTimeout, 60_000, { above: 0 })
  const now = optionalFunction<Clock>('now', o.now) ?? coarseNow
  if (o.shared !== undefined) {
    const name = checkSharedName('shared', o.shared)
    if (name.length > MAX_GROUP_NAME)
      throw new InvalidOptionError('shared', name, `a name of at most ${MAX_GROUP_NAME} characters`)
  }
  return { maxKeys, idleTimeout, now, shared: o.shared }
}
