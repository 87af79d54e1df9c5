import { native } from '../../foundation/native/load-native'
import type { NativeMember } from '../../foundation/native/native-types'
import type { RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { Fingerprint } from './fingerprint'
import { UnreadableLayout } from './unreadable-layout'
import { splitRegionName } from '../../foundation/regions/namespace'

const header = native.layout.region

function readText(bytes: Uint8Array, offset: number, size: number): string {
  const field = bytes.subarray(offset, offset + size)
  const end = field.indexOf(0)
  return Buffer.from(field.subarray(0, end < 0 ? size : end)).toString('utf8')
}

/**
 * A watcher's view of one region (`bulwark top`): a private copy-on-write mapping taken by name that neither joins
 * the region nor keeps it alive, its header fields, and its member table at the time of the view.
 */
export class RegionSnapshot {
  /** The full region name (`<kind>.<shared>`). */
  readonly name: string
  readonly kind: string
  readonly fingerprint: Fingerprint
  readonly version: number
  /** Size of the whole region in bytes. */
  readonly bytes: number
  readonly memberCapacity: number
  readonly payloadOffset: number
  /** +1 each time the region was rebuilt after its members died: counters restart then. */
  readonly generation: number
  readonly createdAt: number
  readonly members: NativeMember[]
  private readonly snapshot: { buffer: ArrayBuffer; members: NativeMember[] }

  constructor(name: string) {
    this.snapshot = native.regionSnapshot(name)
    const buffer = this.snapshot.buffer
    const u8 = new Uint8Array(buffer)
    const view = new DataView(buffer)
    this.name = name
    this.kind = readText(u8, header.kind, header.kindSize)
    this.fingerprint = new Fingerprint(readText(u8, header.fingerprint, header.fingerprintSize))
    this.version = view.getUint32(header.versionOffset, true)
    this.bytes = view.getFloat64(header.totalSize, true)
    this.memberCapacity = view.getUint32(header.memberCapacity, true)
    this.payloadOffset = view.getUint32(header.payloadOffset, true)
    this.generation = view.getInt32(header.generation, true)
    this.createdAt = view.getFloat64(header.createdAt, true)
    this.members = this.snapshot.members
  }

  /** The `shared` name the components were given: the region name without its kind and namespace. */
  get sharedName(): string {
    return splitRegionName(this.name).shared
  }

  /** The application namespace of the region ('' for a region opened without one). */
  get namespace(): string {
    return splitRegionName(this.name).namespace
  }

  /** Slots (lane indices) of the members alive when the view was taken. */
  liveSlots(): number[] {
    return this.members.filter((m) => m.alive).map((m) => m.slot)
  }

  /**
   * The view as a region laid out by `layout`, for the components' own primitives to read. Throws UnreadableLayout
   * unless the layout is exactly the one the region was created with (version, kind, fingerprint and size).
   */
  region(layout: RegionLayout): SharedRegion {
    const problem =
      this.version !== header.version
        ? `layout version ${this.version} (this bulwark reads ${header.version})`
        : layout.fingerprint !== this.fingerprint.text
          ? `fingerprint "${this.fingerprint.text}" (expected "${layout.fingerprint}")`
          : this.bytes - this.payloadOffset < layout.payloadSize || layout.lanes !== this.memberCapacity
            ? `size ${this.bytes} bytes for ${this.memberCapacity} members`
            : undefined
    if (problem !== undefined) throw new UnreadableLayout(`${this.kind} region with ${problem}`)
    return SharedRegion.fromSnapshot(this.name, this.kind, this.snapshot, this.payloadOffset, this.memberCapacity)
  }
}
