import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { RuleBlock } from '../../foundation/live-rules/rule-block'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import { type AccessMode, checkMode, KIND_KEY, MODE_NAMES, parseEntry, type ParsedEntry } from './access-entry'
import { describeAccessList, readSlots, SLOT_BYTES, slotEntry, writeSlot } from './access-layout'
import { flatten, type Intervals, matchV4, matchV6 } from './address-ranges'
import { formatAddress, IPV4, IPV6, parseAddress } from './ip-address'

export type { AccessMode }

export interface AccessListOptions extends Omit<SharingOptions, 'now'> {
  /** Entries the list holds at most (default 10 000, at most 1 048 576): its region, 64 bytes an entry, is made now. */
  maxEntries?: number
  /**
   * The entries a new list starts with, `{ '10.0.0.0/8': 'allow', 'key:partner-7': 'allow', '198.51.100.0/24':
   * 'deny' }`. A shared list takes them only while nobody has changed it: a worker that starts later never undoes
   * an operator's change.
   */
  entries?: Record<string, AccessMode>
}

/** One entry, as `list()` shows it. */
export interface AccessEntry {
  entry: string
  mode: AccessMode
}

export interface AccessListStats {
  /** Entries in the list. */
  entries: number
  maxEntries: number
  /** Disjoint address intervals its ranges compiled to, IPv4 and IPv6. */
  intervals4: number
  intervals6: number
  /** Key entries. */
  keys: number
  /** The list's version: +1 with every change, host-wide (0: never changed). */
  version: number
}

/** What a match finds: no entry, an allow entry, a deny entry. */
export const NO_ENTRY = 0
export const ALLOWED = 1
export const DENIED = 2

const EMPTY: Intervals = {
  width: 1,
  firsts: new Uint32Array(0),
  lasts: new Uint32Array(0),
  modes: new Uint8Array(0),
  count: 0,
}

const idOf = (kind: number, prefix: number, data: string): string => `${kind}/${prefix}/${data}`
const idOfParsed = (e: ParsedEntry): string =>
  idOf(e.kind, e.prefix, e.kind === KIND_KEY ? e.key : e.words.map((w) => w >>> 0).join(','))

/** Validates changes whole (entry text -> mode, null to remove); throws InvalidArgumentError naming what is bad. */
function checkChanges(changes: unknown, what: string): Array<[ParsedEntry, number]> {
  const c = checkOptions<Record<string, unknown>>(changes, what)
  return Object.entries(c).map(([text, mode]) => [parseEntry(text), checkMode(mode)])
}

/**
 * Allow and deny entries (docs/rules/access-lists.md): CIDR ranges of IPv4 and IPv6 addresses (an IPv4-mapped IPv6
 * address is its IPv4 address) and keys, each letting the requests it matches past every limit (allow) or refusing
 * them at once (deny); where ranges nest, the longest prefix decides. The list changes live: `configure` in any
 * process (or `bulwark set access-list.<name>`) applies everywhere at the next request. Bounded: at most
 * `maxEntries`, in one region made at construction. A match parses the address once and searches sorted intervals
 * in typed arrays: no allocation, about log2(2 x ranges) steps.
 */
export class AccessList {
  declare readonly shared: string | undefined
  declare readonly maxEntries: number
  declare private readonly region: SharedRegion
  declare private readonly block: RuleBlock
  declare private readonly i32: Int32Array
  declare private readonly u8: Uint8Array
  declare private readonly u32: Uint32Array
  declare private readonly versionIndex: number
  declare private readonly slots: number
  declare private readonly words: Uint32Array
  private seen = -1
  private v4 = EMPTY
  private v6 = EMPTY
  private keys = new Map<string, number>()
  private used = 0
  private lastAddress: unknown = undefined
  private lastMode = NO_ENTRY
  /** The writer's map of entry -> slot byte offset, valid while the sequence is `indexed`. */
  private index = new Map<string, number>()
  private indexed = -1

  constructor(options?: AccessListOptions) {
    const o = checkOptions<AccessListOptions>(options, 'options')
    this.maxEntries = optionalNumber('maxEntries', o.maxEntries, 10_000, { integer: true, min: 1, max: 1 << 20 })
    const initial = o.entries === undefined ? [] : checkChanges(o.entries, 'entries')
    if (initial.some(([, mode]) => mode === 0)) throw new InvalidArgumentError('entries', o.entries, 'modes, not null')
    const sharing = resolveSharing(o)
    const placement = describeAccessList(this.maxEntries, sharing.lanes)
    this.shared = sharing.shared
    this.region = SharedRegion.forComponent(sharing.shared, placement.layout, sharing.namespace)
    this.block = new RuleBlock(this.region, placement.rules)
    this.i32 = this.region.i32
    this.u8 = this.region.u8
    this.u32 = new Uint32Array(this.region.u8.buffer)
    this.versionIndex = this.block.sequenceIndex
    this.slots = this.region.base + placement.slots
    this.words = new Uint32Array(4)
    try {
      if (initial.length > 0 && this.block.sequence === 0) this.apply(initial)
    } catch (error) {
      this.region.close()
      throw error
    }
    this.refresh()
  }

  /**
   * Adds, changes (a mode) and removes (null) entries at once, validated first and refused whole when any is bad or
   * the list would hold more than `maxEntries`: `configure({ '203.0.113.0/24': 'deny', 'key:ops': 'allow',
   * '198.51.100.7': null })`.
   */
  configure(changes: Record<string, AccessMode | null>): void {
    this.apply(checkChanges(changes, 'changes'))
  }

  /** Adds an entry, or changes its mode. */
  set(entry: string, mode: AccessMode): void {
    this.configure({ [entry]: mode })
  }

  /** Removes an entry; returns whether the list had it. */
  remove(entry: string): boolean {
    const had = this.list().some((e) => e.entry === parseEntry(entry).text)
    this.configure({ [entry]: null })
    return had
  }

  /** Removes every entry. */
  clear(): void {
    this.indexed = this.block.write([], () => {
      this.u8.fill(0, this.slots, this.slots + this.maxEntries * SLOT_BYTES)
      this.index = new Map()
    })
  }

  /** The entries, ranges before keys, each as the list shows it (no host bits; an address alone for one address). */
  list(): AccessEntry[] {
    const entries: AccessEntry[] = []
    for (let s = 0, at = this.slots; s < this.maxEntries; s++, at += SLOT_BYTES) {
      const mode = MODE_NAMES[this.u8[at]]
      if (mode === undefined) continue
      const { kind, prefix, data } = slotEntry(this.u8, this.u32, at)
      if (kind === KIND_KEY) {
        entries.push({ entry: `key:${data}`, mode })
        continue
      }
      const family = kind === IPV4 ? IPV4 : IPV6
      const text = formatAddress(family, data.split(',').map(Number))
      entries.push({ entry: prefix === (family === IPV4 ? 32 : 128) ? text : `${text}/${prefix}`, mode })
    }
    return entries.sort((a, b) => Number(a.entry.startsWith('key:')) - Number(b.entry.startsWith('key:')))
  }

  /** The mode of the entry that decides for `address`, or undefined: `matchAddress` by name. */
  check(address: string): AccessMode | undefined {
    return MODE_NAMES[this.matchAddress(address)]
  }

  /**
   * @internal Hot path: ALLOWED, DENIED or NO_ENTRY for a client address (a string as a socket reports it; anything
   * else matches nothing). One atomic load when the list did not change; the last address is not parsed again.
   */
  matchAddress(address: unknown): number {
    if (Atomics.load(this.i32, this.versionIndex) !== this.seen) this.reload()
    if (address === this.lastAddress) return this.lastMode
    let mode = NO_ENTRY
    if (this.v4.count + this.v6.count > 0) {
      const family = parseAddress(address, this.words)
      if (family === IPV4) mode = matchV4(this.v4, this.words[0])
      else if (family === IPV6) mode = matchV6(this.v6, this.words)
    }
    this.lastAddress = address
    this.lastMode = mode
    return mode
  }

  /** @internal Hot path: ALLOWED, DENIED or NO_ENTRY for a request's key. */
  matchKey(key: unknown): number {
    if (Atomics.load(this.i32, this.versionIndex) !== this.seen) this.reload()
    if (this.keys.size === 0 || typeof key !== 'string') return NO_ENTRY
    return this.keys.get(key) ?? NO_ENTRY
  }

  /** The list's version: +1 with every change, host-wide (0: never changed). */
  get version(): number {
    return this.block.sequence >>> 1
  }

  stats(): AccessListStats {
    this.refresh()
    return {
      entries: this.used,
      maxEntries: this.maxEntries,
      intervals4: this.v4.count,
      intervals6: this.v6.count,
      keys: this.keys.size,
      version: this.version,
    }
  }

  /** Reads the list again if it changed (a match does it first). */
  refresh(): void {
    if (Atomics.load(this.i32, this.versionIndex) !== this.seen) this.reload()
  }

  /** Detaches from the host's list (its entries stay while another process holds it). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** Compiles the slots into intervals and a key map, unless a writer is under way (then: at the next call). */
  private reload(): void {
    const v = Atomics.load(this.i32, this.versionIndex)
    if ((v & 1) === 1) return // a writer is mid-way: keep the last whole list
    const contents = readSlots(this.u8, this.u32, this.slots, this.maxEntries)
    if (Atomics.load(this.i32, this.versionIndex) !== v) return // changed while read: next time
    this.v4 = contents.v4.count === 0 ? EMPTY : flatten(contents.v4)
    this.v6 = contents.v6.count === 0 ? EMPTY : flatten(contents.v6)
    this.keys = contents.keys
    this.used = contents.used
    this.lastAddress = undefined
    this.seen = v
  }

  /** Entry id -> slot byte offset, read again when another member wrote since this one last did (under the lock). */
  private slotIndex(): Map<string, number> {
    if (this.indexed === Atomics.load(this.i32, this.versionIndex) - 1) return this.index
    const index = new Map<string, number>()
    for (let s = 0, at = this.slots; s < this.maxEntries; s++, at += SLOT_BYTES) {
      if (this.u8[at] === 0) continue
      const { kind, prefix, data } = slotEntry(this.u8, this.u32, at)
      index.set(idOf(kind, prefix, data), at)
    }
    this.index = index
    return index
  }

  private apply(changes: Array<[ParsedEntry, number]>): void {
    let adding = 0
    let room = true
    // Nothing in here may throw: the block is held, its sequence odd, until it returns.
    this.indexed = this.block.write([], () => {
      const index = this.slotIndex()
      adding = changes.filter(([e, mode]) => mode !== 0 && !index.has(idOfParsed(e))).length
      const removing = changes.filter(([e, mode]) => mode === 0 && index.has(idOfParsed(e))).length
      room = this.maxEntries - index.size + removing >= adding
      if (!room) return
      for (const [entry, mode] of changes) {
        const id = idOfParsed(entry)
        const at = index.get(id)
        if (mode !== 0 || at === undefined) continue
        this.u8.fill(0, at, at + SLOT_BYTES)
        index.delete(id)
      }
      let free = this.slots
      const end = this.slots + this.maxEntries * SLOT_BYTES
      for (const [entry, mode] of changes) {
        if (mode === 0) continue
        const id = idOfParsed(entry)
        let at = index.get(id)
        if (at === undefined) {
          while (free < end && this.u8[free] !== 0) free += SLOT_BYTES
          if (free === end) break // only if a slot holds a copy of another's entry: the list is full
          at = free
          index.set(id, at)
        }
        writeSlot(this.u8, this.u32, at, entry, mode)
      }
    })
    if (!room) {
      const expected = `at most ${this.maxEntries} entries in all (remove some first)`
      throw new InvalidArgumentError('changes', `${adding} new entries`, expected)
    }
  }
}
