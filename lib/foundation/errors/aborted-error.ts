import { BulwarkError } from './bulwark-error'

/**
 * `execute` was given an AbortSignal that was already aborted: nothing was acquired and the function did not run.
 * `cause` is the signal's reason.
 */
export class AbortedError extends BulwarkError {
  constructor(reason: unknown) {
    super('ERR_BULWARK_ABORTED', 'the operation was aborted before it started')
    ;(this as { cause?: unknown }).cause = reason
  }
}
