/**
 * Marks bulwark's errors on their prototype. A registered symbol, so that an error made by another copy of the
 * package (two versions in one node_modules tree) is still recognised by `isBulwarkError`, where instanceof fails.
 */
const BRAND = Symbol.for('bulwark.error')

/** Base class of every error bulwark throws; `code` (ERR_BULWARK_*) is stable and safe to branch on. */
export class BulwarkError extends Error {
  readonly code: string

  constructor(code: string, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}

Object.defineProperty(BulwarkError.prototype, BRAND, { value: true })

/** Whether `error` is one of bulwark's errors (from any copy of the package); with `code`, of that code only. */
export function hasBulwarkBrand(error: unknown, code?: string): error is BulwarkError {
  return (
    error !== null &&
    typeof error === 'object' &&
    (error as Record<symbol, unknown>)[BRAND] === true &&
    (code === undefined || (error as { code?: unknown }).code === code)
  )
}
