import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { ConsistentHash, checkPickCount } from './consistent-hash'

/**
 * The `n` members this client (`selectKey`) should use, out of `members`: stable for a key, spread evenly over the
 * members, and mostly unchanged when a member comes or goes. Bit-compatible with the reference's subset, so a Go
 * client and a Node client with the same key pick the same members. With at most `n` members, all of them (a
 * copy); n = 0 gives []; a negative or fractional n is an InvalidArgumentError.
 *
 * Builds a ring each call: to pick for many keys over the same members, build one ConsistentHash and call getN.
 */
export function subset<M>(selectKey: string, members: readonly M[], n: number): M[] {
  checkPickCount(n)
  if (typeof selectKey !== 'string') throw new InvalidArgumentError('selectKey', selectKey, 'a string')
  if (!Array.isArray(members)) throw new InvalidArgumentError('members', members, 'an array')
  if (n === 0) return []
  if (members.length <= n) return members.slice()
  return new ConsistentHash(members).getN(selectKey, n)
}
