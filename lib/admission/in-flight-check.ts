/**
 * The one comparison every limit on requests in flight makes (BbrLimiter's CPU and latency checks, the adaptive
 * bulkheads): whether the requests in flight (the one being decided excluded) are over a class's share of `limit`.
 * Priorities, and the fairness policies to come, apply here for every check at once.
 */
export function overLimit(inFlight: number, limit: number, share: number): boolean {
  return inFlight > 1 && inFlight > limit * share
}
