import { LOCK_TIMED_OUT, SpinLock } from './spin-lock'
import type { RegionLayout } from './region-layout'
import type { SharedRegion } from './shared-region'

/** Where a text block lives in a region's payload. */
export interface TextPlacement {
  /** The writers' lock (an Int32), then the sequence (the Int32 after it), on a cache line of their own. */
  lock: number
  /** An f64: the text's length in bytes. */
  length: number
  bytes: number
  capacity: number
}

export function placeText(layout: RegionLayout, capacity: number): TextPlacement {
  const lock = layout.cell(0, true)
  const length = layout.cell(0)
  return { lock, length, bytes: layout.block(capacity), capacity }
}

const READ_TRIES = 16
const decoder = new TextDecoder()
const encoder = new TextEncoder()

/**
 * A text in a region, read without a lock: a seqlock as the live rules' block (docs/rules/live-rules.md), odd while
 * a writer is under way; writers exclude each other with a spin lock that a dead writer does not keep.
 */
export class TextBlock {
  private readonly i32: Int32Array
  private readonly f64: Float64Array
  private readonly u8: Uint8Array
  private readonly sequenceIndex: number
  private readonly lengthIndex: number
  private readonly bytes: number
  private readonly capacity: number
  private readonly lock: SpinLock

  constructor(region: SharedRegion, placement: TextPlacement) {
    this.i32 = region.i32
    this.f64 = region.f64
    this.u8 = region.u8
    this.sequenceIndex = (region.base + placement.lock + 4) >>> 2
    this.lengthIndex = (region.base + placement.length) / 8
    this.bytes = region.base + placement.bytes
    this.capacity = placement.capacity
    this.lock = new SpinLock(region, placement.lock)
  }

  /** +2 with every write (odd while one is under way): compare it to tell whether the text changed. */
  get sequence(): number {
    return Atomics.load(this.i32, this.sequenceIndex)
  }

  /** The text and the sequence it belongs to; undefined when writers kept it changing (look again later). */
  read(): { text: string; sequence: number } | undefined {
    for (let tries = 0; tries < READ_TRIES; tries++) {
      const before = Atomics.load(this.i32, this.sequenceIndex)
      if ((before & 1) !== 0) continue
      const length = this.f64[this.lengthIndex]
      if (!(length >= 0 && length <= this.capacity && Number.isInteger(length))) return undefined
      const copy = this.u8.slice(this.bytes, this.bytes + length)
      if (Atomics.load(this.i32, this.sequenceIndex) === before) return { text: decoder.decode(copy), sequence: before }
    }
    return undefined
  }

  /** Writes `text` as the next version; false when it does not fit or the lock stayed held (nothing written then). */
  write(text: string): boolean {
    const encoded = encoder.encode(text)
    if (encoded.length > this.capacity) return false
    if (this.lock.acquire() === LOCK_TIMED_OUT) return false
    const current = Atomics.load(this.i32, this.sequenceIndex)
    const writing = (current & 1) !== 0 ? current : current + 1 // odd: a writer died halfway; this one completes it
    Atomics.store(this.i32, this.sequenceIndex, writing)
    this.u8.set(encoded, this.bytes)
    this.f64[this.lengthIndex] = encoded.length
    Atomics.store(this.i32, this.sequenceIndex, writing + 1)
    this.lock.release()
    return true
  }
}
