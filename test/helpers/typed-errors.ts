// What a call that must fail with a typed error blamed: the argument (InvalidArgumentError) or option field
// (InvalidOptionError). Fails the test when nothing, or something untyped, was thrown.
import { expect } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'

function caught(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('no error was thrown')
}

export function argumentOf(fn: () => unknown): string {
  const error = caught(fn)
  expect(error).toBeInstanceOf(InvalidArgumentError)
  return (error as InvalidArgumentError).argument
}

export function fieldOf(fn: () => unknown): string {
  const error = caught(fn)
  expect(error).toBeInstanceOf(InvalidOptionError)
  return (error as InvalidOptionError).field
}
