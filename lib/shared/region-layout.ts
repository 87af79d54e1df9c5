import { native } from '../native/load-native'

const windowLayout = native.layout.window

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
    this.kind = kind
    this.lanes = lanes
  }

  /** Adds a layout-relevant setting to the fingerprint (processes sharing a region must agree on all of them). */
  describe(part: string): this {
    this.parts.push(part)
    return this
  }

  /** One f64 cell, on its own line when `ownLine` (a cell many writers update). Returns its payload offset. */
  cell(initial = 0, ownLine = false): number {
    if (ownLine) this.size = alignUp(this.size, 64)
    const offset = this.size
    this.size += ownLine ? 64 : 8
    if (initial !== 0) this.initPairs.push(offset, initial)
    return offset
  }

  /** `bytes` bytes shared by every member (a sketch, a table), starting on a cache line. Returns its payload offset. */
  block(bytes: number): number {
    this.size = alignUp(this.size, 64)
    const offset = this.size
    this.size += alignUp(bytes, 8)
    return offset
  }

  /**
   * `cells` f64 cells per member, each member on its own cache lines. With `reclaim`, a member's cells are zeroed
   * when it detaches or its process dies (for gauges such as requests in flight).
   */
  lanes64(cells: number, reclaim = false): LanePlacement {
    this.size = alignUp(this.size, 64)
    const stride = alignUp(cells * 8, 64)
    const offset = this.size
    this.size += stride * this.lanes
    if (reclaim) {
      for (let i = 0; i < cells; i++) this.reclaimPairs.push(offset + i * 8, stride)
    }
    return { offset, stride, cells }
  }

  /** A rolling window of `size` buckets of `bucketMs`, one lane per member; `start` anchors the buckets. */
  window(size: number, bucketMs: number, start: number): WindowPlacement {
    const startOffset = this.cell()
    this.initPairs.push(startOffset, start)
    this.size = alignUp(this.size, 64)
    const laneStride = alignUp(size * windowLayout.bucketSize, 64)
    const bucketsOffset = this.size
    this.size += laneStride * this.lanes
    return { startOffset, bucketsOffset, laneStride, size, bucketMs }
  }

  get payloadSize(): number {
    return Math.max(64, alignUp(this.size, 64))
  }

  get fingerprint(): string {
    return [`lanes=${this.lanes}`, ...this.parts].join(' ')
  }

  get reclaim(): number[] {
    return this.reclaimPairs.slice()
  }

  get init(): number[] {
    return this.initPairs.slice()
  }
}
