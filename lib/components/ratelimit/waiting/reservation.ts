import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'

/** What a reservation gives back or takes more of when settled. */
export interface Adjustable {
  /**
   * Moves the permits taken by `delta` (> 0: takes more, possibly beyond what is available now: an overdraw paid
   * for by later callers' waits; < 0: gives back). `mark` is what the limiter noted when the permits were taken;
   * `cancelled` when the reservation was cancelled (a quota then gives its request back too).
   */
  adjust(delta: number, mark: number, cancelled?: boolean): void
}

/**
 * Permits taken on an estimate (`reserve(estimate)`), settled once the real cost is known: `settle(actual)` gives
 * the difference back or takes it (an overdraw when the estimate was low: later callers wait it out, as GCRA
 * allows), `cancel()` gives everything back. Only the first settle or cancel counts; later ones do nothing.
 */
export class Reservation {
  private open = true

  /** @internal */
  constructor(
    private readonly owner: Adjustable,
    /** The permits reserved (the estimate). */
    readonly amount: number,
    private readonly mark = 0,
  ) {}

  /** Whether settle or cancel was called. */
  get settled(): boolean {
    return !this.open
  }

  /** The call cost `actual` (a finite number >= 0): the difference with `amount` is given back or taken. */
  settle(actual: number): void {
    if (typeof actual !== 'number' || !(actual >= 0 && actual < Infinity)) {
      throw new InvalidArgumentError('actual', actual, 'a finite number >= 0')
    }
    if (!this.open) return
    this.open = false
    if (actual !== this.amount) this.owner.adjust(actual - this.amount, this.mark)
  }

  /** The call did not happen (or cost nothing): every permit goes back. */
  cancel(): void {
    if (!this.open) return
    this.open = false
    this.owner.adjust(-this.amount, this.mark, true)
  }

  [Symbol.dispose](): void {
    this.cancel()
  }
}
