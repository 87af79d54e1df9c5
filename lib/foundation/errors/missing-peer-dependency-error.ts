import { BulwarkError } from './bulwark-error'

/** An optional peer dependency that a feature needs is not installed (prom-client, @opentelemetry/api). */
export class MissingPeerDependencyError extends BulwarkError {
  readonly dependency: string

  constructor(dependency: string, feature: string, cause: unknown) {
    super('ERR_BULWARK_MISSING_PEER', `${feature} needs the package '${dependency}': npm install ${dependency}`)
    this.dependency = dependency
    ;(this as { cause?: unknown }).cause = cause
  }
}
