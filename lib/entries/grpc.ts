// 'bulwark/grpc': the server interceptor (inbound guard) and the client interceptor (breakers, adaptive bulkheads)
// for @grpc/grpc-js.
export * from '../guards/inbound/inbound-exports'
export { grpcServerGuard } from '../adapters/grpc/grpc-server'
export { callSignal } from '../guards/inbound/request-signal'
export type { GrpcCallInfo, GrpcServerGuardOptions, GrpcServerInterceptor } from '../adapters/grpc/grpc-server'
export { grpcClientGuard } from '../adapters/grpc/grpc-client'
export type { GrpcClientGuardOptions, GrpcClientInterceptor } from '../adapters/grpc/grpc-client'
export { GrpcStatus } from '../adapters/grpc/grpc-module'
export type { GrpcFallback, GrpcFallbackStatus } from '../adapters/grpc/grpc-fallback'
export type { BreakerChoice } from '../guards/outbound/breaker-port'
export type { BulkheadChoice } from '../guards/outbound/bulkhead-port'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'
