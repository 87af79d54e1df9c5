import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { native } from '../native/load-native'
import type { NativeMember } from '../native/native-types'
import { toRegionError } from './region-errors'
import { RegionLayout } from './region-layout'

const regionLayout = native.layout.region
// What the native side accepts as a name (the region is "<kind>.<name>", its file bulwark.<uid>.<kind>.<name>:
// native/core/region/region_names.h).
const regionNamePattern = /^[A-Za-z0-9._-]{1,200}$/

function checkLayout(layout: unknown): RegionLayout {
  if (!(layout instanceof RegionLayout)) throw new InvalidArgumentError('layout', layout, 'a RegionLayout')
  return layout
}

/** Default number of attachments (threads x components) a named region accepts. */
export const DEFAULT_MEMBER_CAPACITY = 64

// A region whose owner was garbage-collected without close() still gives its member slot back.
const finalizer = new FinalizationRegistry<number>((handle) => native.regionClose(handle))

/**
 * The memory that holds one component's state: either private to this thread (`local`) or a named region of
 * POSIX shared memory that every thread and process of the host attaches to (`open`). Components address it
 * through the typed-array views and `base` (the payload's byte offset), the same way in both cases.
 */
export class SharedRegion {
  /** The region's name, `<kind>.<name>` (what `listRegions()` lists), or undefined for a local region. */
  declare readonly name: string | undefined
  declare readonly kind: string
  declare readonly buffer: ArrayBuffer
  declare readonly f64: Float64Array
  declare readonly i32: Int32Array
  declare readonly u8: Uint8Array
  /** Byte offset of the payload in `buffer`. */
  declare readonly base: number
  /** This attachment's member slot, which is also its lane index. */
  declare readonly member: number
  /** Lane capacity (the member capacity; 1 for a local region). */
  declare readonly lanes: number
  /** True when this attach initialised the payload (a new region, or one rebuilt after its processes died). */
  declare readonly created: boolean
  /** True when this attach rebuilt a region that only dead processes were using. */
  declare readonly rebuilt: boolean
  declare private readonly handle: number
  /** i32 index of the header's member high-water mark (a field: the layout is read through a getter). */
  declare private readonly highWaterIndex: number
  private isClosed = false
  /** For a watcher's snapshot: the member table taken with it. */
  private snapshotMembers: NativeMember[] | undefined

  private constructor(
    name: string | undefined,
    kind: string,
    buffer: ArrayBuffer,
    base: number,
    member: number,
    lanes: number,
    handle: number,
    created: boolean,
    rebuilt: boolean,
  ) {
    this.name = name
    this.kind = kind
    this.buffer = buffer
    this.f64 = new Float64Array(buffer)
    this.i32 = new Int32Array(buffer)
    this.u8 = new Uint8Array(buffer)
    this.base = base
    this.member = member
    this.lanes = lanes
    this.handle = handle
    this.highWaterIndex = regionLayout.memberHighWater / 4
    this.created = created
    this.rebuilt = rebuilt
  }

  /**
   * Attaches to (or creates) the host-wide region `<layout.kind>.<name>` for a component laid out by `layout`. It
   * belongs to this user: a region of that name another user made is refused with a `RegionOwnerError`.
   */
  static open(name: string, layout: RegionLayout): SharedRegion {
    if (typeof name !== 'string' || !regionNamePattern.test(name)) {
      throw new InvalidArgumentError('name', name, 'a name of 1-200 characters from A-Z a-z 0-9 . _ -')
    }
    checkLayout(layout)
    const regionName = `${layout.kind}.${name}`
    let opened
    try {
      opened = native.regionOpen({
        name,
        kind: layout.kind,
        fingerprint: layout.fingerprint,
        memberCapacity: layout.lanes,
        payloadSize: layout.payloadSize,
        reclaim: layout.reclaim,
        init: layout.init,
      })
    } catch (error) {
      throw toRegionError(regionName, error)
    }
    const region = new SharedRegion(
      regionName,
      layout.kind,
      opened.buffer,
      opened.payloadOffset,
      opened.member,
      layout.lanes,
      opened.handle,
      opened.created,
      opened.rebuilt,
    )
    finalizer.register(region, opened.handle, region)
    return region
  }

  /**
   * The region a component uses: the host-wide region `<kind>.<namespace>.<shared>` when `shared` is given (and
   * `<kind>.<shared>` without a namespace), else a local one. Components of different kinds, or of different
   * namespaces (applications, docs/guide/trust.md), may use the same `shared` name without meeting.
   */
  static forComponent(shared: string | undefined, layout: RegionLayout, namespace?: string): SharedRegion {
    checkLayout(layout)
    if (shared === undefined) return SharedRegion.local(layout)
    const name = namespace === undefined ? shared : `${namespace}.${shared}`
    if (typeof shared !== 'string' || !regionNamePattern.test(name)) {
      throw new InvalidArgumentError(
        'shared',
        shared,
        'a region name of A-Z a-z 0-9 . _ -, or undefined for a local region',
      )
    }
    return SharedRegion.open(name, layout)
  }

  /**
   * Wraps a watcher's snapshot of region `name` (native.regionSnapshot: a private copy-on-write view that neither
   * joins the region nor keeps it alive) so that the components' primitives read it as a member reads its region.
   * It has no lane of its own (nothing it writes reaches the region) and nothing to close; `members()` is the
   * member table taken with the snapshot.
   * @internal
   */
  static fromSnapshot(
    name: string,
    kind: string,
    snapshot: { buffer: ArrayBuffer; members: NativeMember[] },
    payloadOffset: number,
    lanes: number,
  ): SharedRegion {
    const region = new SharedRegion(name, kind, snapshot.buffer, payloadOffset, 0, lanes, 0, false, false)
    region.snapshotMembers = snapshot.members
    return region
  }

  /** A region private to this thread, with one lane. */
  static local(layout: RegionLayout): SharedRegion {
    checkLayout(layout)
    const buffer = new ArrayBuffer(layout.payloadSize)
    const f64 = new Float64Array(buffer)
    const init = layout.init
    for (let i = 0; i < init.length; i += 2) f64[init[i] / 8] = init[i + 1]
    return new SharedRegion(undefined, layout.kind, buffer, 0, 0, 1, 0, true, false)
  }

  get shared(): boolean {
    return this.name !== undefined
  }

  get closed(): boolean {
    return this.isClosed
  }

  /** Lanes that have ever had a member: readers merge lanes [0, laneHighWater()). */
  laneHighWater(): number {
    if (this.name === undefined) return 1
    // Bounded by the lanes this layout has: a header overwritten by a faulty writer must not send readers past them.
    // A plain load (an aligned 32-bit read is never torn; Atomics.load costs several times more on the hot path):
    // a member that has just joined may be missed for a call or two, as it would be a moment earlier.
    const high = this.i32[this.highWaterIndex]
    return high < this.lanes ? high : this.lanes
  }

  /** Monotonic ms at which the payload was (re)initialised. */
  get createdAt(): number {
    return this.name === undefined ? 0 : this.f64[regionLayout.createdAt / 8]
  }

  /** Live and dead members of a shared region (diagnostics). */
  members(): NativeMember[] {
    if (this.snapshotMembers !== undefined) return this.snapshotMembers.slice()
    if (this.name === undefined || this.isClosed) return []
    return native.regionMembers(this.handle)
  }

  /**
   * Detaches: this member's reclaimable cells (its requests in flight, say) are given back, and the name is
   * removed if this was the last live member. The views stay readable; writes after close() no longer count.
   */
  close(): void {
    if (this.isClosed) return
    this.isClosed = true
    if (this.name !== undefined && this.snapshotMembers === undefined) {
      finalizer.unregister(this)
      native.regionClose(this.handle)
    }
  }

  [Symbol.dispose](): void {
    this.close()
  }
}

/** The region argument of a primitive (RollingWindow, LaneCounter, AtomicCounter) must be a SharedRegion. */
export function checkRegion(value: unknown): SharedRegion {
  if (!(value instanceof SharedRegion)) throw new InvalidArgumentError('region', value, 'a SharedRegion')
  return value
}
