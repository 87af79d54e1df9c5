import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

/** True for a permit count a limiter accepts: a finite number > 0. */
export function validPermits(n: unknown): boolean {
  return typeof n === 'number' && n > 0 && n < Infinity
}

/** Throws the error for a bad permit count (kept out of the hot functions so that they stay small). */
export function invalidPermits(n: unknown): never {
  throw new InvalidArgumentError('n', n, 'a finite number > 0')
}
