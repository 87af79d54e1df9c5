/**
 * Exponential backoff with full jitter: a delay drawn uniformly from [0, min(maxDelay, baseDelay * 2^retry)).
 * Spreading retries over the whole interval keeps clients that failed together from retrying together.
 * `retry` counts from 0 (the delay before the first retry).
 */
export function fullJitterDelay(retry: number, baseDelay: number, maxDelay: number, random: () => number): number {
  const ceiling = Math.min(maxDelay, baseDelay * 2 ** retry)
  return random() * ceiling
}
