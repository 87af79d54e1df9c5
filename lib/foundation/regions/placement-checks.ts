// Argument checks for the region primitives (RegionLayout, SharedRegion, RollingWindow, LaneCounter,
// AtomicCounter): run once per construction, never on a hot path, so that a bad argument is an InvalidArgumentError
// instead of a silent write outside a component's cells or a native error without a type.
import { InvalidArgumentError } from '../errors/invalid-argument-error'

/** An integer argument in [min, max]. */
export function checkInteger(argument: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(argument, value, `an integer in [${min}, ${max}]`)
  }
  return value
}

/** The placement argument must be an object (what a RegionLayout method returned). */
export function checkPlacementObject<T extends object>(value: unknown): T {
  if (value === null || typeof value !== 'object') {
    throw new InvalidArgumentError('placement', value, 'a placement returned by a RegionLayout method')
  }
  return value as T
}

/** `bytes` bytes at payload offset `offset` (a multiple of `align`) must lie inside the region's payload. */
export function checkSpan(
  argument: string,
  region: { readonly buffer: { readonly byteLength: number }; readonly base: number },
  offset: unknown,
  bytes: number,
  align: number,
): number {
  const payload = region.buffer.byteLength - region.base
  if (
    typeof offset !== 'number' ||
    !Number.isInteger(offset) ||
    offset < 0 ||
    offset % align !== 0 ||
    offset + bytes > payload
  ) {
    throw new InvalidArgumentError(
      argument,
      offset,
      `a payload offset (a multiple of ${align}) with ${bytes} bytes inside the region's ${payload}`,
    )
  }
  return offset
}
