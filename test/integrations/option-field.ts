import { expect } from 'vitest'

import { InvalidOptionError } from '../../lib/index'

/** The `field` of the InvalidOptionError that `make(options)` throws (undefined if it throws none). */
export function badOptionField(make: (options: never) => unknown, options: object): string | undefined {
  try {
    make(options as never)
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidOptionError)
    return (e as InvalidOptionError).field
  }
  return undefined
}
