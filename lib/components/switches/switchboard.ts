import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { PRIORITY_NAMES } from '../../admission/priority'
import { regionAttached } from '../../foundation/live-rules/attach-hooks'
import { RuleBlock } from '../../foundation/live-rules/rule-block'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { describeSwitches, MODE, NAME_BYTES, readSlots, SLOT_BYTES, type SwitchMode } from './switch-layout'

export type { SwitchMode }

/**
 * What a switch applies to: `breaker:<shared name>` (a breaker, or every breaker of a BreakerGroup given
 * `switches`), `breaker:<group>/<key>` (one key's breaker of that group), `priority:<class>` or `route:<route>`.
 */
export type SwitchTarget = `breaker:${string}` | `priority:${string}` | `route:${string}`

export interface SwitchboardOptions extends Omit<SharingOptions, 'now'> {
  /** Switches the board holds at most (default 64). */
  slots?: number
}

/** One active switch, as `list()` and `bulwark top` show it. */
export interface SwitchState {
  target: string
  mode: SwitchMode
  /** When it was set, Date.now() ms. */
  since: number
}

const encoder = new TextEncoder()

/** The modes each kind of target takes. */
const MODES_OF: Record<string, readonly SwitchMode[]> = {
  breaker: ['open', 'closed'],
  priority: ['shed', 'fallback'],
  route: ['shed', 'fallback'],
}

/** Checks a target and a mode (or null: clear), throwing InvalidArgumentError naming what is wrong. */
export function checkSwitch(target: unknown, mode: unknown): { target: string; code: number } {
  const t = typeof target === 'string' ? target : ''
  const colon = t.indexOf(':')
  const kind = colon > 0 ? t.slice(0, colon) : ''
  const name = t.slice(colon + 1)
  const modes = MODES_OF[kind]
  if (modes === undefined || name === '' || encoder.encode(t).length > NAME_BYTES) {
    throw new InvalidArgumentError(
      'target',
      target,
      `breaker:<name>, priority:<class> or route:<route>, at most ${NAME_BYTES} bytes`,
    )
  }
  if (kind === 'priority' && !(PRIORITY_NAMES as readonly string[]).includes(name)) {
    throw new InvalidArgumentError('target', target, `priority:${PRIORITY_NAMES.join('|')}`)
  }
  if (mode === null) return { target: t, code: 0 }
  if (!(modes as readonly unknown[]).includes(mode)) {
    throw new InvalidArgumentError(
      'mode',
      mode,
      `for ${kind}: ${modes.map((m) => `'${m}'`).join(' or ')}, or null to clear`,
    )
  }
  return { target: t, code: MODE[mode as SwitchMode] }
}

/**
 * Operators' switches (docs/guide/degrade.md, "Manual switches"): force a breaker open or closed, force the
 * shedding of a priority class or a route, or answer them from the fallback. With `shared`, one board for every
 * thread and process of the host: a switch set anywhere (`bulwark set switches.<name> ...`) applies everywhere at
 * the next request, and stays until it is cleared. Components read the board on their hot path with one atomic
 * load; what changed is parsed once per change.
 */
export class Switchboard {
  readonly shared: string | undefined
  private readonly region: SharedRegion
  private readonly i32: Int32Array
  private readonly f64: Float64Array
  private readonly u8: Uint8Array
  private readonly block: RuleBlock
  private readonly versionIndex: number
  private readonly slotsBase: number
  private readonly slots: number
  private seen = -1
  private entries: SwitchState[] = []
  private readonly classModes = new Uint8Array(4)
  private routes = new Map<string, number>()
  private breakers = new Map<string, number>()
  /** `breaker:<group>/<key>` switches, by group then key. */
  private groups = new Map<string, Map<string, number>>()
  /** A priority class or a route has a switch: the inbound guards look further only then. */
  private traffic = false

  constructor(options?: SwitchboardOptions) {
    const o = checkOptions<SwitchboardOptions>(options, 'options')
    const slots = optionalNumber('slots', o.slots, 64, { integer: true, min: 1, max: 4096 })
    const sharing = resolveSharing(o)
    const placement = describeSwitches(slots, sharing.lanes)
    this.shared = sharing.shared
    this.region = SharedRegion.forComponent(sharing.shared, placement.layout, sharing.namespace)
    const base = this.region.base
    this.i32 = this.region.i32
    this.f64 = this.region.f64
    this.u8 = this.region.u8
    this.block = new RuleBlock(this.region, placement.rules)
    this.versionIndex = this.block.sequenceIndex
    this.slotsBase = base + placement.slotsOffset
    this.slots = slots
    // The attach hooks: on a host that follows a rule source, a new board takes the source's switches (checked by
    // configure(), as any change).
    const region = this.region
    if (region.name !== undefined)
      regionAttached('switches', region.name, region.created, (changes) =>
        this.configure(changes as Record<string, SwitchMode | null>),
      )
  }

  /**
   * Sets a switch (replacing the target's mode if it has one). Throws on a bad target or mode, a full board, or a
   * lock another member held too long (SharedMemoryError ERR_BULWARK_REGION_BUSY): then nothing changed.
   */
  set(target: SwitchTarget, mode: SwitchMode): void {
    this.configure({ [target]: mode })
  }

  /** Clears a target's switch; returns whether it had one. */
  clear(target: SwitchTarget): boolean {
    const had = this.list().some((s) => s.target === target)
    this.configure({ [target]: null })
    return had
  }

  /** Clears every switch. */
  clearAll(): void {
    this.block.write([], () => this.u8.fill(0, this.slotsBase, this.slotsBase + this.slots * SLOT_BYTES))
  }

  /**
   * Sets (a mode) and clears (null) several switches at once, validated first and refused whole when any is bad:
   * `configure({ 'breaker:payments': 'open', 'route:/search': 'shed', 'priority:low': null })`.
   */
  configure(changes: Record<string, SwitchMode | null>): void {
    const c = checkOptions<Record<string, SwitchMode | null>>(changes, 'changes')
    const checked = Object.entries(c).map(([target, mode]) => checkSwitch(target, mode))
    let free: number[] = []
    const change = () => {
      const now = Date.now()
      for (const { target, code } of checked) {
        const at = this.find(target)
        if (code === 0) {
          if (at >= 0) this.u8.fill(0, at, at + SLOT_BYTES)
          continue
        }
        this.writeSlot(at >= 0 ? at : (free.pop() as number), target, code, now)
      }
    }
    // A full board refuses the change before the block's version moves: all or nothing.
    this.block.write([], change, () => (free = this.freeSlots(checked.filter((x) => x.code !== 0).length, checked)))
  }

  /** The active switches, oldest first. */
  list(): SwitchState[] {
    this.refresh()
    return this.entries.slice()
  }

  /** The live-rules sequence: +2 for every change, host-wide (odd while a change is being written). */
  get version(): number {
    return Atomics.load(this.i32, this.versionIndex)
  }

  /** Hot path: rereads the board if it changed since the last call (one atomic load when it did not). */
  refresh(): void {
    const v = Atomics.load(this.i32, this.versionIndex)
    if (v !== this.seen) this.reload(v)
  }

  /** @internal Whether a priority class or a route has a switch (after refresh()). */
  get hasTrafficSwitches(): boolean {
    return this.traffic
  }

  /** @internal MODE code of a priority class (0: none; after refresh()). */
  priorityMode(p: number): number {
    return this.classModes[p]
  }

  /** @internal MODE code of a route (0: none; after refresh()). */
  routeMode(route: string): number {
    return this.routes.size === 0 ? 0 : (this.routes.get(route) ?? 0)
  }

  /** @internal MODE code of a breaker by its shared name (0: none); refreshes. */
  breakerMode(name: string | undefined): number {
    this.refresh()
    return name === undefined || this.breakers.size === 0 ? 0 : (this.breakers.get(name) ?? 0)
  }

  /** Detaches from the host's board (switches stay while another process holds it). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /**
   * @internal MODE code for `key` of the BreakerGroup named `group` (0: none; after refresh()):
   * a switch on the key (`breaker:<group>/<key>`) first, then one on the whole group (`breaker:<group>`).
   */
  groupMode(group: string, key: string): number {
    if (this.breakers.size === 0) return 0
    return this.groups.get(group)?.get(key) ?? this.breakers.get(group) ?? 0
  }

  private reload(v: number): void {
    if ((v & 1) === 1) return // a writer is mid-way: keep the last whole table, look again next time
    const entries = readSlots(this.u8, this.f64, this.slotsBase, this.slots)
    if (Atomics.load(this.i32, this.versionIndex) !== v) return // changed while read: next time
    const classModes = new Uint8Array(4)
    const routes = new Map<string, number>()
    const breakers = new Map<string, number>()
    const groups = new Map<string, Map<string, number>>()
    for (const e of entries) {
      const name = e.target.slice(e.target.indexOf(':') + 1)
      if (e.target.startsWith('priority:')) classModes[PRIORITY_NAMES.indexOf(name as never)] = MODE[e.mode]
      else if (e.target.startsWith('route:')) routes.set(name, MODE[e.mode])
      else {
        breakers.set(name, MODE[e.mode])
        // A group's name has no '/' (a shared name): what follows the first one is the key, which may have more.
        const slash = name.indexOf('/')
        if (slash > 0) {
          const group = name.slice(0, slash)
          if (!groups.has(group)) groups.set(group, new Map())
          groups.get(group)?.set(name.slice(slash + 1), MODE[e.mode])
        }
      }
    }
    this.classModes.set(classModes)
    this.routes = routes
    this.breakers = breakers
    this.groups = groups
    this.traffic = routes.size > 0 || classModes.some((m) => m !== 0)
    this.entries = entries
    this.seen = v
  }

  private find(target: string): number {
    const bytes = encoder.encode(target)
    for (let s = 0; s < this.slots; s++) {
      const at = this.slotsBase + s * SLOT_BYTES
      if (this.f64[at / 8] === 0 || this.f64[at / 8 + 2] !== bytes.length) continue
      if (bytes.every((b, i) => this.u8[at + 24 + i] === b)) return at
    }
    return -1
  }

  /** Empty slots for `needed` new targets (those not already on the board); throws when the board is full. */
  private freeSlots(needed: number, checked: Array<{ target: string; code: number }>): number[] {
    const existing = checked.filter((x) => x.code !== 0 && this.find(x.target) >= 0).length
    const free: number[] = []
    for (let s = this.slots - 1; s >= 0; s--) {
      const at = this.slotsBase + s * SLOT_BYTES
      if (this.f64[at / 8] === 0) free.push(at)
    }
    if (free.length < needed - existing) {
      throw new InvalidArgumentError(
        'changes',
        Object.fromEntries(checked.map((x) => [x.target, x.code])),
        `at most ${this.slots} switches on the board (clear some first)`,
      )
    }
    return free
  }

  private writeSlot(at: number, target: string, code: number, now: number): void {
    const bytes = encoder.encode(target)
    this.u8.fill(0, at, at + SLOT_BYTES)
    this.u8.set(bytes, at + 24)
    this.f64[at / 8 + 1] = now
    this.f64[at / 8 + 2] = bytes.length
    this.f64[at / 8] = code
  }
}
