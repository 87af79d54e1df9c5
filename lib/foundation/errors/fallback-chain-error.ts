import { BulwarkError } from './bulwark-error'

/** Every step of a fallback chain failed. `errors` holds each step's error, in the order the steps ran. */
export class FallbackChainError extends BulwarkError {
  readonly errors: readonly unknown[]

  constructor(errors: readonly unknown[]) {
    super('ERR_BULWARK_FALLBACKS_FAILED', `all ${errors.length} steps of the fallback chain failed`)
    this.errors = errors
    ;(this as { cause?: unknown }).cause = errors[errors.length - 1]
  }
}
