/** Where a decision goes: to Redis, to Redis as the one trial call of an open circuit, or to the insurance limiter. */
export const Route = { Redis: 0, Probe: 1, Insurance: 2 } as const
export type Route = (typeof Route)[keyof typeof Route]

/**
 * Remembers whether Redis has been answering in time, so that a dead or slow Redis costs the timeout to a handful
 * of calls, not to every call. Closed: every decision goes to Redis. After `openAfter` failures in a row (errors or
 * timeouts) it opens: decisions go to the insurance limiter at once, and one call every `probeInterval` ms is let
 * through to Redis as a probe. The first call answered in time closes it again.
 */
export class RedisCircuit {
  private failures = 0
  private isOpen = false
  private probing = false
  private nextProbeAt = 0

  constructor(
    private readonly openAfter: number,
    private readonly probeInterval: number,
    private readonly onChange: (open: boolean) => void,
  ) {}

  get open(): boolean {
    return this.isOpen
  }

  route(now: number): Route {
    if (!this.isOpen) return Route.Redis
    if (this.probing || now < this.nextProbeAt) return Route.Insurance
    this.probing = true
    return Route.Probe
  }

  /** A call answered in time. */
  succeeded(probe: boolean): void {
    this.failures = 0
    if (probe) this.probing = false
    if (this.isOpen) {
      this.isOpen = false
      this.probing = false
      this.onChange(false)
    }
  }

  /** A call failed or timed out. */
  failed(probe: boolean, now: number): void {
    this.failures++
    if (probe) {
      this.probing = false
      this.nextProbeAt = now + this.probeInterval
      return
    }
    if (!this.isOpen && this.failures >= this.openAfter) {
      this.isOpen = true
      this.nextProbeAt = now + this.probeInterval
      this.onChange(true)
    }
  }
}
