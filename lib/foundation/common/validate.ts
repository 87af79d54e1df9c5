// Option validation, in one place: every check throws InvalidOptionError naming the field and the bad value.
import { InvalidOptionError } from '../errors/invalid-option-error'

export interface NumberRule {
  min?: number
  max?: number
  /** Exclusive lower bound. */
  above?: number
  integer?: boolean
}

function describeRule(rule: NumberRule): string {
  const kind = rule.integer ? 'an integer' : 'a finite number'
  const parts: string[] = []
  if (rule.above !== undefined) parts.push(`> ${rule.above}`)
  if (rule.min !== undefined) parts.push(`>= ${rule.min}`)
  if (rule.max !== undefined) parts.push(`<= ${rule.max}`)
  return parts.length ? `${kind} ${parts.join(' and ')}` : kind
}

export function checkNumber(field: string, value: unknown, rule: NumberRule): number {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!rule.integer || Number.isInteger(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max) &&
    (rule.above === undefined || value > rule.above)
  if (!ok) throw new InvalidOptionError(field, value, describeRule(rule))
  return value as number
}

/** `value` if given, else `fallback`; then checked. */
export function optionalNumber(field: string, value: unknown, fallback: number, rule: NumberRule): number {
  return checkNumber(field, value === undefined ? fallback : value, rule)
}

export function checkFunction<T extends (...args: never[]) => unknown>(field: string, value: unknown): T {
  if (typeof value !== 'function') throw new InvalidOptionError(field, value, 'a function')
  return value as T
}

export function optionalFunction<T extends (...args: never[]) => unknown>(
  field: string,
  value: unknown,
): T | undefined {
  return value === undefined ? undefined : checkFunction<T>(field, value)
}

export function checkOneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidOptionError(field, value, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`)
  }
  return value as T
}

export function checkBoolean(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidOptionError(field, value, 'a boolean')
  return value
}

export function optionalBoolean(field: string, value: unknown, fallback: boolean): boolean {
  return checkBoolean(field, value === undefined ? fallback : value)
}

/** Options must be an object (or undefined, meaning all defaults). */
export function checkOptions<T extends object>(value: unknown, what: string): Partial<T> {
  if (value === undefined) return {}
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value)) {
    throw new InvalidOptionError(what, value, 'an options object')
  }
  return value as Partial<T>
}

const regionNamePattern = /^[A-Za-z0-9._-]{1,120}$/

/** A `shared` name: it becomes part of a region's file or object name (native/core/region/region_names.h). */
export function checkSharedName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !regionNamePattern.test(value)) {
    throw new InvalidOptionError(field, value, 'a name of 1-120 characters from A-Z a-z 0-9 . _ -')
  }
  return value
}

/**
 * Refuses fields that must be absent, each with the reason (`expected` text): a field of another variant of a union,
 * or a 0.x name that was renamed. A renamed option must not silently fall back to its default.
 */
export function refuseFields(o: object, fields: Record<string, string>): void {
  for (const [field, expected] of Object.entries(fields)) {
    const value = (o as Record<string, unknown>)[field]
    if (value !== undefined) throw new InvalidOptionError(field, value, expected)
  }
}

/** The `expected` text for a 0.x option that was renamed (see CHANGELOG.md). */
export const renamedTo = (name: string): string => `absent: it is now called ${name} (see CHANGELOG.md)`
