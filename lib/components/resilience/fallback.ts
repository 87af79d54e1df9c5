import { FallbackChainError } from '../../foundation/errors/fallback-chain-error'
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

/** A step after the first: it gets the errors of the steps that failed before it, oldest first. */
export type FallbackStep<T> = (errors: readonly unknown[]) => T | Promise<T>

/**
 * Runs `primary`, and on failure each fallback in order, until one succeeds; its result is returned. When every
 * step fails, rejects with FallbackChainError holding all their errors.
 *
 *   const price = await withFallbacks(() => pricing.get(id), () => cache.get(id), () => DEFAULT_PRICE)
 */
export async function withFallbacks<T>(primary: () => T | Promise<T>, ...fallbacks: FallbackStep<T>[]): Promise<T> {
  if (typeof primary !== 'function') throw new InvalidArgumentError('primary', primary, 'a function')
  fallbacks.forEach((step, i) => {
    if (typeof step !== 'function') throw new InvalidArgumentError(`fallbacks[${i}]`, step, 'a function')
  })
  const errors: unknown[] = []
  try {
    return await primary()
  } catch (error) {
    errors.push(error)
  }
  for (const step of fallbacks) {
    try {
      return await step(errors.slice())
    } catch (error) {
      errors.push(error)
    }
  }
  throw new FallbackChainError(errors)
}
