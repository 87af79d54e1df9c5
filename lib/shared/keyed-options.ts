import { InvalidOptionError } from '../errors/invalid-option-error'
import { type Clock, coarseNow } from '../signals/clock'
import { checkSharedName, optionalFunction, optionalNumber } from '../validate'

/** The options every keyed collection of components (breakers, bulkheads) takes about its bounds and sharing. */
export interface KeyedOptions {
  maxKeys?: number
  idleTimeout?: number
  shared?: string
  now?: Clock
}

/**
 * Longest `shared` name of a keyed collection: each key's component is named `<shared>.<key, made safe>.<hash>`,
 * which must stay within a region name.
 */
export const MAX_GROUP_NAME = 64

/** Validates a keyed collection's bounds (default 1000 keys, 60 s idle), shared name and clock, once. */
export function resolveKeyedOptions(o: KeyedOptions): Required<Omit<KeyedOptions, 'shared'>> & { shared?: string } {
  const maxKeys = optionalNumber('maxKeys', o.maxKeys, 1000, { integer: true, min: 1, max: 1e7 })
  const idleTimeout = optionalNumber('idleTimeout', o.idleTimeout, 60_000, { above: 0 })
  const now = optionalFunction<Clock>('now', o.now) ?? coarseNow
  if (o.shared !== undefined) {
    const name = checkSharedName('shared', o.shared)
    if (name.length > MAX_GROUP_NAME)
      throw new InvalidOptionError('shared', name, `a name of at most ${MAX_GROUP_NAME} characters`)
  }
  return { maxKeys, idleTimeout, now, shared: o.shared }
}
