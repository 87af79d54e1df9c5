import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { native } from '../native/load-native'
import { checkInteger } from './placement-checks'

const windowLayout = native.layout.window
const regionLayout = native.layout.region
// No dots: a region is listed as "<kind>.<name>", which must split back into both.
const kindPattern = new RegExp(`^[A-Za-z0-9_-]{1,${regionLayout.kindSize - 1}}$`)
// A region (header, member slots and payload) is at most 4 GiB, as the native side allows.
const MAX_REGION_BYTES = 2 ** 32

/** Where a rolling window lives in a region's payload. */
export interface WindowPlacement {
  /** Payload offset of the f64 cell holding the window's start time (bucket boundaries are anchored there). */
  startOffset: number
  /** Payload offset of lane 0's first bucket. */
  bucketsOffset: number
  laneStride: number
  size: number
  bucketMs: number
}

/** Where per-member cells live: member m's cell i is at `offset + m * stride + i * 8`. */
export interface LanePlacement {
  offset: number
  stride: number
  cells: number
}

function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a
}

/**
 * Describes a component's payload: shared cells, per-member lanes and rolling windows. The same description gives
 * the offsets every attacher uses, the payload size, the cells reclaimed when a member dies, the initial values
 * written once at creation, and the fingerprint that attachers must agree on.
 */
export class RegionLayout {
  readonly kind: string
  /** Lanes per lane set: the member capacity when shared, 1 when local. */
  readonly lanes: number
  private size = 0
  private readonly parts: string[] = []
  private readonly reclaimPairs: number[] = []
  private readonly initPairs: number[] = []

  constructor(kind: string, lanes: number) {
    if (typeof kind !== 'string' || !kindPattern.test(kind)) {
      throw new InvalidArgumentError(
        'kind',
        kind,
        `a name of 1-${regionLayout.kindSize - 1} characters from A-Z a-z 0-9 _ -`,
      )
    }
    this.kind = kind
    this.lanes = checkInteger('lanes', lanes, 1, regionLayout.maxMemberCapacity)
  }

  /** Adds a layout-relevant setting to the fingerprint (processes sharing a region must agree on all of them). */
  describe(part: string): this {
    if (typeof part !== 'string') throw new InvalidArgumentError('part', part, 'a string')
    const bytes = Buffer.byteLength([this.fingerprint, part].join(' '))
    if (bytes >= regionLayout.fingerprintSize) {
      throw new InvalidArgumentError(
        'part',
        part,
        `a setting that keeps the layout's fingerprint under ${regionLayout.fingerprintSize} bytes`,
      )
    }
    this.parts.push(part)
    return this
  }

  /** One f64 cell, on its own line when `ownLine` (a cell many writers update). Returns its payload offset. */
  cell(initial = 0, ownLine = false): number {
    // Any number: components store clock readings here, and a clock's bad reading is the component's to handle.
    if (typeof initial !== 'number') throw new InvalidArgumentError('initial', initial, 'a number')
    if (typeof ownLine !== 'boolean') throw new InvalidArgumentError('ownLine', ownLine, 'a boolean')
    if (ownLine) this.size = alignUp(this.size, 64)
    const offset = this.size
    this.grow('initial', initial, ownLine ? 64 : 8)
    if (initial !== 0) this.initPairs.push(offset, initial)
    return offset
  }

  /** `bytes` bytes shared by every member (a sketch, a table), starting on a cache line. Returns its payload offset. */
  block(bytes: number): number {
    checkInteger('bytes', bytes, 0, MAX_REGION_BYTES)
    this.size = alignUp(this.size, 64)
    const offset = this.size
    this.grow('bytes', bytes, alignUp(bytes, 8))
    return offset
  }

  /**
   * `cells` f64 cells per member, each member on its own cache lines. With `reclaim`, a member's cells are zeroed
   * when it detaches or its process dies (for gauges such as requests in flight).
   */
  lanes64(cells: number, reclaim = false): LanePlacement {
    checkInteger('cells', cells, 1, MAX_REGION_BYTES / 8)
    if (typeof reclaim !== 'boolean') throw new InvalidArgumentError('reclaim', reclaim, 'a boolean')
    if (reclaim && this.reclaimPairs.length / 2 + cells > regionLayout.maxReclaim) {
      throw new InvalidArgumentError('cells', cells, `at most ${regionLayout.maxReclaim} reclaimable cells per layout`)
    }
    this.size = alignUp(this.size, 64)
    const stride = alignUp(cells * 8, 64)
    const offset = this.size
    this.grow('cells', cells, stride * this.lanes)
    if (reclaim) {
      for (let i = 0; i < cells; i++) this.reclaimPairs.push(offset + i * 8, stride)
    }
    return { offset, stride, cells }
  }

  /** A rolling window of `size` buckets of `bucketMs`, one lane per member; `start` anchors the buckets. */
  window(size: number, bucketMs: number, start: number): WindowPlacement {
    checkInteger('size', size, 1, 1_000_000)
    if (typeof bucketMs !== 'number' || !(bucketMs > 0 && bucketMs < Infinity)) {
      throw new InvalidArgumentError('bucketMs', bucketMs, 'a finite number > 0')
    }
    if (typeof start !== 'number') throw new InvalidArgumentError('start', start, 'a number')
    const startOffset = this.cell()
    this.initPairs.push(startOffset, start)
    this.size = alignUp(this.size, 64)
    const laneStride = alignUp(size * windowLayout.bucketSize, 64)
    const bucketsOffset = this.size
    this.grow('size', size, laneStride * this.lanes)
    return { startOffset, bucketsOffset, laneStride, size, bucketMs }
  }

  get payloadSize(): number {
    return Math.max(64, alignUp(this.size, 64))
  }

  get fingerprint(): string {
    return [`lanes=${this.lanes}`, ...this.parts].join(' ')
  }

  /** @internal Pairs (cell offset, member stride) that SharedRegion clears when a member's slot is reclaimed. */
  get reclaim(): number[] {
    return this.reclaimPairs.slice()
  }

  /** @internal Pairs (offset, value) that SharedRegion writes once when it creates the region. */
  get init(): number[] {
    return this.initPairs.slice()
  }

  /** Adds `bytes` to the payload, refusing a region over 4 GiB (blamed on `argument`). */
  private grow(argument: string, value: unknown, bytes: number): void {
    const header = regionLayout.headerSize + this.lanes * regionLayout.memberSlotSize
    if (header + alignUp(this.size + bytes, 64) > MAX_REGION_BYTES) {
      throw new InvalidArgumentError(argument, value, 'a size that keeps the region within 4 GiB')
    }
    this.size += bytes
  }
}
