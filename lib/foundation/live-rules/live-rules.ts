import { InvalidOptionError } from '../errors/invalid-option-error'
import { type Event, EventSource } from '../common/event-source'
import type { SharedRegion } from '../regions/shared-region'
import { regionAttached } from './attach-hooks'
import { RuleBlock, type RulePlacement } from './rule-block'
import { type ShadowStats, ShadowTally } from './shadow-tally'

/** A rule as flat fields: `{ cpuThreshold: 700, 'queueDelay.target': 5 }`. */
export type FlatRule = Record<string, number>

/** What a component tells its live rules (docs/rules/live-rules.md). */
export interface RuleSchema {
  /** The fields that change at run time, as paths into the component's options (`queueDelay.target`). */
  readonly fields: readonly string[]
  /**
   * Validates a whole rule as the constructor validates its options (throwing InvalidOptionError naming the field)
   * and returns the values in `fields` order, defaults applied.
   */
  resolve(rule: FlatRule): number[]
  /** Makes the values (in `fields` order) the ones this member obeys. */
  apply(values: Float64Array): void
}

/**
 * What a component's `rules` reports: the rule's version (0: the constructor's options) and its values; `shadow`
 * once its shadow mode was ever on (docs/rules/shadow.md).
 */
export interface RuleStats {
  version: number
  values: FlatRule
  shadow?: ShadowStats
}

/** The rule field that turns a component's shadow mode on (true or 1) and off (false or 0). */
export const SHADOW_FIELD = 'shadow'

/** A partial rule, nested as options are (`{ queueDelay: { target: 5 } }`), flattened and checked. */
function flatten(partial: unknown, fields: readonly string[], prefix = '', into: FlatRule = {}): FlatRule {
  if (partial === null || typeof partial !== 'object' || Array.isArray(partial)) {
    throw new InvalidOptionError(prefix === '' ? 'rule' : prefix, partial, 'an object of rule fields')
  }
  for (const [key, value] of Object.entries(partial)) {
    const path = prefix === '' ? key : `${prefix}.${key}`
    if (value !== null && typeof value === 'object' && fields.some((f) => f.startsWith(`${path}.`))) {
      flatten(value, fields, path, into)
    } else if (!fields.includes(path)) {
      throw new InvalidOptionError(path, value, `a field that changes at run time (${fields.join(', ')})`)
    } else if (path === SHADOW_FIELD) {
      if (value !== true && value !== false && value !== 0 && value !== 1)
        throw new InvalidOptionError(path, value, 'true or false')
      into[path] = value === true || value === 1 ? 1 : 0
    } else if (typeof value !== 'number') {
      throw new InvalidOptionError(path, value, 'a number')
    } else {
      into[path] = value
    }
  }
  return into
}

/**
 * The live rules of one component: a rule block in its region that any member (or `bulwark set`) rewrites with
 * `configure`, and that every member applies at its next call once the version changed. Until the first change the
 * members obey their constructor's options; the block holds the creating member's values, which a change starts
 * from.
 */
export class LiveRules {
  /** Int32 view and index of the block's sequence: components compare it with `seen` on their hot path. */
  declare readonly i32: Int32Array
  declare readonly index: number
  /** The sequence this member last looked at. */
  seen = 0
  /** Versions this member refused to apply (not valid for it), leaving its previous rule in force. */
  refused = 0
  /**
   * Whether this member decides in shadow mode (docs/rules/shadow.md): it counts a refusal with wouldRefuse() and
   * admits instead. Read on the component's refusal path only, so that the admit path stays as it was.
   */
  shadow = false
  /** What the member counts in shadow mode (undefined: the component has no shadow mode). */
  declare readonly tally: ShadowTally | undefined
  declare private readonly fields: readonly string[]
  declare private readonly block: RuleBlock
  declare private readonly schema: RuleSchema
  declare private readonly scratch: Float64Array
  private readonly changes = new EventSource<RuleStats>()
  /** Told each rule this member starts to obey (at its first call after the change). */
  readonly onChange: Event<RuleStats> = this.changes.event

  constructor(region: SharedRegion, placement: RulePlacement, schema: RuleSchema) {
    this.block = new RuleBlock(region, placement)
    this.schema = schema
    this.tally = placement.shadow && new ShadowTally(region, placement.shadow)
    this.fields = this.tally === undefined ? schema.fields : [...schema.fields, SHADOW_FIELD]
    this.i32 = region.i32
    this.index = this.block.sequenceIndex
    this.scratch = new Float64Array(placement.count)
    this.refresh()
    // The attach hooks: on a host that follows a rule source, a new region takes the source's rule (applied at the
    // members' next call).
    if (region.name !== undefined) regionAttached('rules', region.name, region.created, (rule) => this.adopt(rule))
  }

  /** Writes `partial` over the current rule as the next version, without applying it here (at the next call). */
  private adopt(partial: object): void {
    this.block.write(this.validate(partial))
  }

  /** Applies a newer version if there is one (off the hot path, which compares `seen` itself). Never throws. */
  obey(): void {
    if (this.i32[this.index] !== this.seen) this.refresh()
  }

  /**
   * The values (in `fields` order) of a newer version that is valid but not applied yet, else undefined: what a
   * getter reports, changing nothing (the rule is applied, and onChange told, at the member's next call). Never throws.
   */
  pending(): readonly number[] | undefined {
    if (this.i32[this.index] === this.seen) return undefined
    const values = new Float64Array(this.scratch.length)
    const sequence = this.block.read(values)
    if (sequence < 0 || sequence === this.seen || sequence === 0) return undefined
    try {
      return this.schema.resolve(toRule(values, this.schema.fields))
    } catch {
      return undefined // not valid for this member: it keeps its rule
    }
  }

  /** Applies a newer version if there is one (the caller saw the sequence move). Never throws. */
  refresh(): void {
    const sequence = this.block.read(this.scratch)
    if (sequence < 0) return // a writer is under way: look again at the next call
    const changed = sequence !== this.seen
    this.seen = sequence
    if (!changed || sequence === 0) return
    try {
      // Written by a validating writer; validated again so that a bad block can never become this member's rule.
      const values = this.schema.resolve(toRule(this.scratch, this.schema.fields))
      this.scratch.set(values)
      this.schema.apply(this.scratch)
    } catch {
      this.refused++
      return
    }
    if (this.tally !== undefined) this.shadow = this.scratch[this.scratch.length - 1] !== 0
    if (this.changes.hasListeners)
      this.changes.emit({ version: sequence >>> 1, values: toRule(this.scratch, this.schema.fields) })
  }

  /** Counts a request admitted in shadow mode that label `slot` (placeRules' shadow labels) would have refused. */
  wouldRefuse(slot: number): void {
    this.tally?.count(slot)
  }

  /**
   * A refusal for label `slot`, as the component's refusal path returns it: in shadow mode counted and admitted
   * (true), otherwise refused (false).
   */
  shadowAdmits(slot: number): boolean {
    if (!this.shadow) return false
    this.tally?.count(slot)
    return true
  }

  /**
   * Validates `partial` over the current rule and writes it as the next version for every member. Throws
   * InvalidOptionError (naming the field) and changes nothing when any field is bad, or SharedMemoryError
   * (ERR_BULWARK_REGION_BUSY) when another member held the block's lock too long. `whileWriting` runs while the
   * block is held.
   */
  configure(partial: unknown, whileWriting?: (values: readonly number[]) => void): RuleStats {
    const values = this.validate(partial)
    this.block.write(values, whileWriting && (() => whileWriting(values)))
    this.refresh()
    return this.stats()
  }

  /** The values `partial` over the current rule would give, validated; throws InvalidOptionError when bad. */
  validate(partial: unknown): number[] {
    const { [SHADOW_FIELD]: shadow, ...changes } = flatten(partial, this.fields)
    const current = readRule(this.block, this.schema.fields)
    const values = this.schema.resolve({ ...current.values, ...changes })
    if (this.tally !== undefined) values.push(shadow ?? (current.shadow?.enabled === true ? 1 : 0))
    return values
  }

  get version(): number {
    return this.block.sequence >>> 1
  }

  stats(): RuleStats {
    return readRule(this.block, this.schema.fields)
  }
}

function toRule(values: Float64Array, fields: readonly string[]): FlatRule {
  const rule: FlatRule = {}
  fields.forEach((field, i) => (rule[field] = values[i]))
  return rule
}

/**
 * The rule in `block` as its version and values, and its shadow mode once it was ever on (`bulwark top` reads it
 * from a region it does not join).
 */
export function readRule(block: RuleBlock, fields: readonly string[]): RuleStats {
  const values = new Float64Array(block.count)
  const sequence = block.read(values)
  const stats: RuleStats = { version: Math.max(0, sequence) >>> 1, values: toRule(values, fields) }
  if (block.shadow !== undefined) {
    const enabled = values[block.count - 1] !== 0
    const wouldRefuse = new ShadowTally(block.region, block.shadow).read()
    if (enabled || wouldRefuse.some((c) => c.count > 0)) stats.shadow = { enabled, wouldRefuse }
  }
  return stats
}

/** `{ 'queueDelay.target': 5 }` as options nest it: `{ queueDelay: { target: 5 } }`. */
export function nestRule(rule: FlatRule): Record<string, unknown> {
  const nested: Record<string, unknown> = {}
  for (const [path, value] of Object.entries(rule)) {
    const parts = path.split('.')
    let node = nested
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>
    node[parts[parts.length - 1]] = value
  }
  return nested
}
