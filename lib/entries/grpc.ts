// 'bulwark/grpc': the server interceptor (inbound guard) and the client interceptor (breakers, adaptive bulkheads)
// for @grpc/grpc-js.
export * from '../integrations/inbound-exports'
export { grpcServerGuard } from '../integrations/grpc-server'
export { callSignal } from '../integrations/request-signal'
export type { GrpcCallInfo, GrpcServerGuardOptions, GrpcServerInterceptor } from '../integrations/grpc-server'
export { grpcClientGuard } from '../integrations/grpc-client'
export type { GrpcClientGuardOptions, GrpcClientInterceptor } from '../integrations/grpc-client'
export { GrpcStatus } from '../integrations/grpc-module'
export type { GrpcFallback, GrpcFallbackStatus } from '../integrations/grpc-fallback'
export type { BreakerChoice } from '../integrations/breaker-port'
export type { BulkheadChoice } from '../integrations/bulkhead-port'
