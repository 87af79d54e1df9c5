import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

/**
 * Exponential backoff with full jitter: a delay drawn uniformly from [0, min(maxDelay, baseDelay * 2^retry)).
 * Spreading retries over the whole interval keeps clients that failed together from retrying together.
 * `retry` counts from 0 (the delay before the first retry).
 */
export function fullJitterDelay(retry: number, baseDelay: number, maxDelay: number, random: () => number): number {
  if (typeof retry !== 'number' || !Number.isInteger(retry) || retry < 0)
    throw new InvalidArgumentError('retry', retry, 'an integer >= 0')
  if (typeof baseDelay !== 'number' || !(baseDelay >= 0 && baseDelay < Infinity))
    throw new InvalidArgumentError('baseDelay', baseDelay, 'a finite number >= 0')
  if (typeof maxDelay !== 'number' || !(maxDelay >= 0 && maxDelay < Infinity))
    throw new InvalidArgumentError('maxDelay', maxDelay, 'a finite number >= 0')
  if (typeof random !== 'function')
    throw new InvalidArgumentError('random', random, 'a function returning a number in [0, 1)')
  const grown = baseDelay * 2 ** retry // NaN for 0 * Infinity (a huge retry): then maxDelay is the ceiling
  const ceiling = grown < maxDelay ? grown : maxDelay
  const r = random()
  // A random source that strays out of [0, 1) (NaN included) must not turn into a negative or NaN delay.
  return (typeof r === 'number' && r >= 0 && r < 1 ? r : 0) * ceiling
}
