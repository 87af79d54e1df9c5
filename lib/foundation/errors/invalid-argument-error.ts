import { BulwarkError } from './bulwark-error'
import { describeValue } from './describe-value'

/** A method argument is of the wrong type or out of range. Names the argument and the bad value. */
export class InvalidArgumentError extends BulwarkError {
  readonly argument: string
  readonly value: unknown

  constructor(argument: string, value: unknown, expected: string) {
    super('ERR_BULWARK_INVALID_ARGUMENT', `argument \`${argument}\` must be ${expected}, got ${describeValue(value)}`)
    this.argument = argument
    this.value = value
  }
}
