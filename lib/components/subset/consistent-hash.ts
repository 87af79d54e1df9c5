import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { FNV_OFFSET_BASIS, fnv1a32, fnv1a32Update } from './fnv1a32'

// Sorting packs each point as hash * OWNER_SPAN + owner index into one f64 (exact below 2^53).
const OWNER_SPAN = 2 ** 21

export interface ConsistentHashOptions {
  /** Points on the ring per member (default 160, as the reference's subset uses). */
  replicas?: number
}

/** A member's name on the ring: String(member), or an InvalidArgumentError for a value that has none. */
function memberName(member: unknown): string {
  if (typeof member === 'string') return member
  try {
    return String(member)
  } catch {
    throw new InvalidArgumentError('member', member, 'a value with a string form (String(member) threw)')
  }
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
  return key
}

/** Checks a count of members to pick: an integer >= 0. */
export function checkPickCount(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw new InvalidArgumentError('n', n, 'an integer >= 0')
  }
  return n
}

/**
 * A consistent-hash ring, bit-compatible with the reference (docs/rules/subset.md): each member gets `replicas` points,
 * point i hashed as FNV-1a 32 of the decimal `i` followed by the member's string; a key starts at the first point
 * strictly greater than its hash, wrapping. Points that collide belong to the member added last, and removing a
 * member removes its points, as in the reference, so that a Go service and a Node service agree after the same
 * changes. Members are told apart by `String(member)`.
 *
 * Unlike the reference, the sorted ring is rebuilt once after a batch of changes (on the next lookup), not after
 * every member added, and adding a present member or removing an absent one changes nothing.
 */
export class ConsistentHash<M = string> {
  readonly replicas: number
  /** Ring point (as an int32, which V8 keeps unboxed) → owner's name, as the reference's circle map. */
  private readonly points = new Map<number, string>()
  private readonly byName = new Map<string, M>()
  private dirty = true
  private sortedHashes = new Uint32Array(0)
  /** For each sorted point, the index of its owner in `owners`. */
  private pointOwner = new Int32Array(0)
  private owners: M[] = []
  /** Per owner, the lookup that last picked it (no set allocated per lookup). */
  private pickedBy = new Uint32Array(0)
  private lookup = 0
  /** Hash states after the decimal replica index: the part of every point key that members share. */
  private readonly replicaPrefix: Int32Array

  constructor(members: Iterable<M> = [], options?: ConsistentHashOptions) {
    const o = checkOptions<ConsistentHashOptions>(options, 'options')
    this.replicas = optionalNumber('replicas', o.replicas, 160, { min: 1, max: 10_000, integer: true })
    this.replicaPrefix = new Int32Array(this.replicas)
    for (let i = 0; i < this.replicas; i++) this.replicaPrefix[i] = fnv1a32Update(FNV_OFFSET_BASIS, String(i))
    if (members === null || typeof (members as { [Symbol.iterator]?: unknown })?.[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError('members', members, 'an iterable of members')
    }
    for (const m of members) this.add(m)
  }

  get size(): number {
    return this.byName.size
  }

  members(): M[] {
    return [...this.byName.values()]
  }

  has(member: M): boolean {
    return this.byName.has(memberName(member))
  }

  add(member: M): void {
    const name = memberName(member)
    if (this.byName.has(name)) return
    for (let i = 0; i < this.replicas; i++) this.points.set(this.pointHash(i, name), name)
    this.byName.set(name, member)
    this.dirty = true
  }

  remove(member: M): void {
    const name = memberName(member)
    if (!this.byName.delete(name)) return
    for (let i = 0; i < this.replicas; i++) this.points.delete(this.pointHash(i, name))
    this.dirty = true
  }

  /** Makes the ring hold exactly `members`: those absent are removed, new ones added in order. */
  set(members: Iterable<M>): void {
    const wanted = new Set<string>()
    for (const m of members) wanted.add(memberName(m))
    for (const [name, member] of this.byName) if (!wanted.has(name)) this.remove(member)
    for (const m of members) this.add(m)
  }

  /** The member owning `key`, or undefined when the ring is empty. */
  get(key: string): M | undefined {
    checkKey(key)
    this.build()
    if (this.sortedHashes.length === 0) return undefined
    return this.owners[this.pointOwner[this.search(fnv1a32(key))]]
  }

  /** Up to `n` distinct members, walking clockwise from `key`'s point. `n` = 0 gives []. */
  getN(key: string, n: number): M[] {
    checkPickCount(n)
    checkKey(key)
    this.build()
    const points = this.sortedHashes.length
    const want = Math.min(n, this.owners.length)
    const out: M[] = []
    if (want === 0 || points === 0) return out
    const lookup = this.nextLookup()
    const start = this.search(fnv1a32(key))
    for (let step = 0; step < points && out.length < want; step++) {
      const i = start + step < points ? start + step : start + step - points
      const owner = this.pointOwner[i]
      if (this.pickedBy[owner] === lookup) continue
      this.pickedBy[owner] = lookup
      out.push(this.owners[owner])
    }
    return out
  }

  private pointHash(replica: number, name: string): number {
    return fnv1a32Update(this.replicaPrefix[replica], name) | 0
  }

  /** Index of the first point strictly greater than `hash`, or 0 past the last one. */
  private search(hash: number): number {
    const sorted = this.sortedHashes
    let lo = 0
    let hi = sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (sorted[mid] > hash) hi = mid
      else lo = mid + 1
    }
    return lo < sorted.length ? lo : 0
  }

  private nextLookup(): number {
    this.lookup = (this.lookup + 1) >>> 0
    if (this.lookup === 0) {
      this.pickedBy.fill(0)
      this.lookup = 1
    }
    return this.lookup
  }

  private build(): void {
    if (!this.dirty) return
    this.dirty = false
    const names = [...this.byName.keys()]
    if (names.length >= OWNER_SPAN)
      throw new InvalidArgumentError('members', names.length, `fewer than ${OWNER_SPAN} members`)
    const index = new Map<string, number>()
    names.forEach((name, i) => index.set(name, i))
    this.owners = names.map((name) => this.byName.get(name) as M)
    const packed = new Float64Array(this.points.size)
    let j = 0
    for (const [hash, name] of this.points) packed[j++] = (hash >>> 0) * OWNER_SPAN + (index.get(name) as number)
    packed.sort()
    this.sortedHashes = new Uint32Array(packed.length)
    this.pointOwner = new Int32Array(packed.length)
    for (let i = 0; i < packed.length; i++) {
      this.sortedHashes[i] = Math.floor(packed[i] / OWNER_SPAN)
      this.pointOwner[i] = packed[i] % OWNER_SPAN
    }
    this.pickedBy = new Uint32Array(names.length)
  }
}
