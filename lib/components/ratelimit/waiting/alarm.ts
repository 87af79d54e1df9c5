/** One wake-up time for a queue: `set(at)` keeps the sooner of the pending time and `at` (the limiter's clock). */
export interface Alarm {
  set(at: number): void
  clear(): void
}

/**
 * An alarm on one timer. The timer keeps the process alive while set, as any wait does. It is armed for the time
 * left on the limiter's clock, at least 1 ms, so a clock that has not reached `at` yet is simply asked again.
 */
export class TimerAlarm implements Alarm {
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private at = Infinity

  constructor(
    private readonly now: () => number,
    private readonly fire: () => void,
  ) {}

  set(at: number): void {
    if (this.timer !== undefined) {
      if (at >= this.at) return
      clearTimeout(this.timer)
    }
    this.at = at
    const ms = at - this.now()
    this.timer = setTimeout(this.ring, ms >= 1 ? Math.min(ms, 2 ** 31 - 1) : 1)
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.at = Infinity
  }

  private readonly ring = (): void => {
    this.timer = undefined
    this.at = Infinity
    this.fire()
  }
}
