import type { Deadlined } from './deadline-queue'

/** One decision. Being limited is an answer, not an error. */
export interface RateLimitDecision {
  allowed: boolean
  /** Permits left for the key after this decision. */
  remaining: number
  /** When refused: ms until the permits could be there (if nobody else takes any); 0 when allowed. */
  retryAfterMs: number
  /**
   * Who decided: 'redis'; 'local' when this host refused the key because Redis refused it less than its
   * retryAfterMs ago; 'insurance' when the local insurance limiter decided (Redis down, slow, not ready or skipped).
   */
  source: 'redis' | 'insurance' | 'local'
}

/** Called back when a pending decision's deadline passes before Redis answered. */
export interface DecisionOwner {
  handleTimeout(call: PendingDecision): void
}

/** A decision waiting for Redis. */
export class PendingDecision implements Deadlined {
  settled = false

  constructor(
    readonly owner: DecisionOwner,
    /** The key as the insurance limiter knows it (bounded: boundedKey). */
    readonly key: string,
    readonly redisKey: string,
    readonly cost: number,
    /** The cost as the script's argument. */
    readonly costArg: string,
    /** The circuit's one trial call while Redis is skipped. */
    readonly probe: boolean,
    readonly deadline: number,
    readonly resolve: (decision: RateLimitDecision) => void,
  ) {}

  expire(): void {
    this.owner.handleTimeout(this)
  }
}
