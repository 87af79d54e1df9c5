import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'

/** The parts of `@grpc/grpc-js` the interceptors use (>= 1.10, which has server interceptors). */
export interface GrpcModule {
  ServerInterceptingCall: new (next: any, responder?: any) => any
  InterceptingCall: new (next: any, requester?: any) => any
  Metadata: new () => any
}

/** gRPC status codes (the protocol's numbers, the same in every implementation). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const

let loaded: GrpcModule | undefined

/** The module given, else `@grpc/grpc-js` as the application resolves it, loaded on first use (never at import). */
export function grpcModule(given: unknown): GrpcModule {
  if (given !== undefined) {
    const m = given as Partial<GrpcModule> | null
    if (
      m === null ||
      typeof m !== 'object' ||
      typeof m.ServerInterceptingCall !== 'function' ||
      typeof m.InterceptingCall !== 'function'
    ) {
      throw new InvalidOptionError('grpc', given, 'the @grpc/grpc-js module, version 1.10 or later')
    }
    return m as GrpcModule
  }
  if (loaded !== undefined) return loaded
  let m: Partial<GrpcModule>
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    m = require('@grpc/grpc-js') as Partial<GrpcModule>
  } catch (error) {
    throw new MissingPeerDependencyError('@grpc/grpc-js', 'the gRPC guards', error)
  }
  if (typeof m.ServerInterceptingCall !== 'function') {
    throw new InvalidOptionError(
      'grpc',
      m,
      '@grpc/grpc-js 1.10 or later (the installed one has no server interceptors)',
    )
  }
  loaded = m as GrpcModule
  return loaded
}
