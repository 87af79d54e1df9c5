import { BulwarkError } from './bulwark-error'

/** The native addon could not be loaded on this platform. The message says what was tried and how to fix it. */
export class NativeLoadError extends BulwarkError {
  readonly platform: string
  readonly tried: string[]

  constructor(message: string, platform: string, tried: string[], cause: unknown) {
    super('ERR_BULWARK_NATIVE_LOAD', message)
    this.platform = platform
    this.tried = tried
    ;(this as { cause?: unknown }).cause = cause
  }
}
