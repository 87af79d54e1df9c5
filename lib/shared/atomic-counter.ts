import type { SharedRegion } from './shared-region'

/**
 * One 32-bit integer cell updated with Atomics by every member: for state that must be decided once for the whole
 * host (a compare-and-swap on a breaker's state, a probe permit). Place it with `layout.cell(0, true)` so that it
 * has a cache line of its own.
 */
export class AtomicCounter {
  private readonly i32: Int32Array
  private readonly index: number

  constructor(region: SharedRegion, offset: number) {
    this.i32 = region.i32
    this.index = (region.base + offset) >> 2
  }

  add(value: number): number {
    return Atomics.add(this.i32, this.index, value) + value
  }

  load(): number {
    return Atomics.load(this.i32, this.index)
  }

  store(value: number): void {
    Atomics.store(this.i32, this.index, value)
  }

  compareExchange(expected: number, replacement: number): boolean {
    return Atomics.compareExchange(this.i32, this.index, expected, replacement) === expected
  }
}
