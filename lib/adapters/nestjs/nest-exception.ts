import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'

/** What the guard takes from `@nestjs/common`: its HttpException, so that Nest's exception filters know its throws. */
export interface NestCommonModule {
  HttpException: new (response: string | object, status: number, options?: { cause?: unknown }) => Error
}

/** What the guard and its interceptor throw when they refuse a request or answer in its handler's place. */
export interface GuardRefusal extends Error {
  /** The shed reason ('in-flight', 'rate-limit'...) or the fallback reason ('timeout', 'error'...). */
  readonly reason: string
  /** Seconds the answer asks the client to wait (0 for an answer in the handler's place). */
  readonly retryAfter: number
  /**
   * The guard has written the answer itself (the fallback's): a filter that catches it must not answer again
   * (Nest's own filters see the response sent and only end it).
   */
  readonly answered: boolean
  getStatus(): number
}

type RefusalClass = new (
  body: object,
  status: number,
  fields: Pick<GuardRefusal, 'reason' | 'retryAfter' | 'answered'>,
  cause?: unknown,
) => GuardRefusal

const classes = new WeakMap<NestCommonModule, RefusalClass>()
let loaded: NestCommonModule | undefined

/** The module given, else `@nestjs/common` as the application resolves it, loaded on first use (never at import). */
export function nestCommon(given: unknown): NestCommonModule {
  if (given !== undefined) {
    if (typeof (given as Partial<NestCommonModule> | null)?.HttpException !== 'function')
      throw new InvalidOptionError('nest', given, 'the @nestjs/common module')
    return given as NestCommonModule
  }
  if (loaded !== undefined) return loaded
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('@nestjs/common') as NestCommonModule
  } catch (error) {
    throw new MissingPeerDependencyError('@nestjs/common', 'the NestJS guard', error)
  }
  return loaded
}

/** The HttpException of `common` that the guard throws (made once per module: an application has one). */
export function refusalClass(common: NestCommonModule): RefusalClass {
  let made = classes.get(common)
  if (made === undefined) {
    made = class GuardRefusalException extends common.HttpException {
      readonly reason: string
      readonly retryAfter: number
      readonly answered: boolean
      constructor(
        body: object,
        status: number,
        fields: Pick<GuardRefusal, 'reason' | 'retryAfter' | 'answered'>,
        cause?: unknown,
      ) {
        super(body, status, cause === undefined ? undefined : { cause })
        this.reason = fields.reason
        this.retryAfter = fields.retryAfter
        this.answered = fields.answered
      }
    } as unknown as RefusalClass
    classes.set(common, made)
  }
  return made
}
