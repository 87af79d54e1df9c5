// The load a limiter reads: one of the sampler's measures, or inputs the application injects. The queueing-delay
// check reads it as well as BbrLimiter, so it lives below both.

/** Where the limiter's load comes from. */
export type LoadSignal =
  | 'max'
  | 'cpu'
  | 'elu'
  /** Permille; replaces every measured input (CPU, ELU and the queueing delay check is off). */
  | (() => number)
  /**
   * Inputs injected: load in permille, queueing delay in ms and how long the loop's current turn has run when a
   * request is decided, ms (tests, simulations, custom signals; docs/rules/bbr.md).
   */
  | { load: () => number; delay?: () => number; turnAge?: () => number }
