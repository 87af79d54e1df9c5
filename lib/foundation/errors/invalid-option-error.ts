import { BulwarkError } from './bulwark-error'
import { describeValue } from './describe-value'

/** A constructor option is missing, of the wrong type, or out of range. Names the field and the bad value. */
export class InvalidOptionError extends BulwarkError {
  readonly field: string
  readonly value: unknown

  constructor(field: string, value: unknown, expected: string) {
    super('ERR_BULWARK_INVALID_OPTION', `option \`${field}\` must be ${expected}, got ${describeValue(value)}`)
    this.field = field
    this.value = value
  }
}
