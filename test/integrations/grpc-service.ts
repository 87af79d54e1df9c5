// A small gRPC service for the tests, defined without .proto files: JSON messages over grpc-js on loopback.
import * as grpc from '@grpc/grpc-js'
import { afterEach } from 'vitest'

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()),
}

function unary(path: string) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  }
}

export const echoService = {
  echo: unary('/test.Echo/Echo'),
  other: unary('/test.Echo/Other'),
} satisfies grpc.ServiceDefinition

export type Unary = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => void

export interface EchoServer {
  port: number
  close(): Promise<void>
}

export async function startEcho(
  handlers: { echo: Unary; other?: Unary },
  options: grpc.ServerOptions = {},
): Promise<EchoServer> {
  const server = new grpc.Server(options)
  server.addService(echoService, { echo: handlers.echo, other: handlers.other ?? handlers.echo })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  )
  return { port, close: () => new Promise((r) => server.tryShutdown(() => r())) }
}

export const EchoClient = grpc.makeGenericClientConstructor(echoService, 'Echo')

export interface CallResult {
  code: number
  details?: string
  value?: unknown
}

/** One unary call; resolves with the status code (0 on success), whatever it is. */
export function call(
  client: grpc.Client,
  method: 'echo' | 'other',
  request: unknown,
  options: { metadata?: Record<string, string>; deadline?: number } = {},
): Promise<CallResult> {
  const metadata = new grpc.Metadata()
  for (const [k, v] of Object.entries(options.metadata ?? {})) metadata.set(k, v)
  const callOptions = options.deadline === undefined ? {} : { deadline: Date.now() + options.deadline }
  return new Promise((resolve) => {
    ;(client as any)[method](request, metadata, callOptions, (error: grpc.ServiceError | null, value: unknown) =>
      resolve(error ? { code: error.code, details: error.details } : { code: 0, value }),
    )
  })
}

/** Closes, after each test, the server and client a test opened through `opened`. */
export function closeAfterEach(): { server?: EchoServer; client?: grpc.Client } {
  const opened: { server?: EchoServer; client?: grpc.Client } = {}
  afterEach(async () => {
    opened.client?.close()
    await opened.server?.close()
    opened.client = opened.server = undefined
  })
  return opened
}
