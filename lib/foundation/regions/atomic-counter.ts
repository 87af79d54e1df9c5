import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { checkSpan } from './placement-checks'
import { checkRegion, type SharedRegion } from './shared-region'

function int32(argument: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
    throw new InvalidArgumentError(argument, value, 'a 32-bit integer')
  }
  return value
}

/**
 * One 32-bit integer cell updated with Atomics by every member: for state that must be decided once for the whole
 * host (a compare-and-swap on a breaker's state, a probe permit). Place it with `layout.cell(0, true)` so that it
 * has a cache line of its own.
 */
export class AtomicCounter {
  private readonly i32: Int32Array
  private readonly index: number

  constructor(region: SharedRegion, offset: number) {
    checkRegion(region)
    checkSpan('offset', region, offset, 4, 4)
    this.i32 = region.i32
    this.index = (region.base + offset) >>> 2 // unsigned: a payload may pass 2 GiB
  }

  /** Adds `value` and returns the cell's new value (wrapping as an Int32 does, like the cell itself). */
  add(value: number): number {
    return (Atomics.add(this.i32, this.index, int32('value', value)) + value) | 0
  }

  load(): number {
    return Atomics.load(this.i32, this.index)
  }

  store(value: number): void {
    Atomics.store(this.i32, this.index, int32('value', value))
  }

  compareExchange(expected: number, replacement: number): boolean {
    return (
      Atomics.compareExchange(this.i32, this.index, int32('expected', expected), int32('replacement', replacement)) ===
      expected
    )
  }
}
