/**
 * How many admitted requests each connection holds unfinished (a socket; for HTTP/2, the session, all its streams
 * together), for the inbound guard's `connectionConcurrency` (docs/guide/trust.md). The count lives on the connection
 * object itself, under a symbol of this guard's: it goes with the connection, costs no map entry and no allocation,
 * and two guards on one connection keep their own counts.
 */
export class ConnectionCount {
  /** The most admitted, unfinished requests one connection may hold. */
  readonly max: number
  private readonly held = Symbol('bulwark.connectionHeld')

  constructor(max: number) {
    this.max = max
  }

  /** Whether `connection` already holds `max` admitted requests. */
  full(connection: object): boolean {
    const held = (connection as Record<symbol, number | undefined>)[this.held]
    return held !== undefined && held >= this.max
  }

  /** `connection` holds one more admitted request. */
  take(connection: object): void {
    const c = connection as Record<symbol, number | undefined>
    const held = c[this.held]
    c[this.held] = held === undefined ? 1 : held + 1
  }

  /** One of `connection`'s admitted requests is over. */
  giveBack(connection: object): void {
    const c = connection as Record<symbol, number>
    c[this.held]--
  }
}
