import type { InboundGuard } from './inbound-guard'

/** A response or stream: it emits 'close' when its client goes away (or once it is over). */
interface Closable {
  once(event: 'close', listener: () => void): unknown
  off(event: 'close', listener: () => void): unknown
}

/**
 * For a request the guard answered QUEUED (docs/rules/queue.md): waits for a slot, then calls `decided(token)` once
 * (a token >= 0: admitted; else the Shed code to answer). If `res` closes first, the client is gone: its place in the
 * queue is freed, the request counted in `clientGone`, and `gone` (if given) is called instead.
 */
export function awaitSlot<Req>(
  guard: InboundGuard<Req>,
  res: Closable,
  decided: (token: number) => void,
  gone?: () => void,
): void {
  const closed = (): void => {
    if (!waiter.cancel()) return
    guard.countClientGone()
    gone?.()
  }
  const waiter = guard.waitForSlot((token) => {
    res.off('close', closed)
    decided(token)
  })
  res.once('close', closed)
}
