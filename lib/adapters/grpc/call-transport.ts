// What the gRPC server guard reads and changes of grpc-js's call below it: the HTTP/2 session it came on, and how a
// streaming handler's messages wait for the client (docs/guide/trust.md).

/** A call of grpc-js's interceptor chain: an interceptor's (with `nextCall`) or grpc-js's own (with `stream`). */
interface ChainedCall {
  nextCall?: ChainedCall
  stream?: { session?: object }
}

/**
 * The HTTP/2 session `call` came on (the object whose calls `connectionConcurrency` counts), or undefined when this
 * grpc-js keeps it elsewhere: then the calls are not bounded per connection.
 */
export function sessionOf(call: unknown): object | undefined {
  let c = call as ChainedCall | undefined
  for (let depth = 0; c !== undefined && c !== null && depth < 64; depth++) {
    if (c.stream !== undefined) return c.stream?.session ?? undefined
    c = c.nextCall
  }
  return undefined
}

/** How many of a streaming handler's messages may wait unsent for the client: grpc-js's own buffer holds 16. */
export const MESSAGES_AHEAD = 16

interface SendingCall {
  sendMessage(message: unknown, callback: () => void): void
}

/**
 * grpc-js passes a streaming handler's next message on (and its `call.end()`, as the status) only once the client
 * has taken the last one: its write waits for the client's HTTP/2 flow control. So a client that does not read
 * would keep the handler's end, and the call's token, waiting for ever. With this, `call` (the guard's own, directly
 * above grpc-js's) accepts up to `MESSAGES_AHEAD` messages the client has not taken yet, the handler's write
 * answered at once; the handler waits only when that many are unsent, and its end comes through while they wait.
 * Messages and status keep their order: they go down in the order the handler gave them.
 */
export function sendAhead(call: SendingCall): void {
  const send = call.sendMessage.bind(call)
  let unsent = 0
  let held: (() => void) | undefined // the handler's write callback, while MESSAGES_AHEAD are unsent
  const sent = (): void => {
    unsent--
    const callback = held
    if (callback === undefined) return
    held = undefined
    callback()
  }
  call.sendMessage = (message: unknown, callback: () => void): void => {
    unsent++
    send(message, sent)
    if (unsent < MESSAGES_AHEAD) callback()
    else held = callback
  }
}
