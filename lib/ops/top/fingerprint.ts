import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

/**
 * A region's fingerprint read back: the `key=value` settings and bare flags (such as a layout version `v1`) that a
 * component's RegionLayout wrote, which are what a watcher needs to lay the region out again.
 */
export class Fingerprint {
  readonly text: string
  private readonly values = new Map<string, string>()
  private readonly flags = new Set<string>()

  constructor(text: string) {
    this.text = text
    for (const part of text.split(' ')) {
      if (part === '') continue
      const eq = part.indexOf('=')
      if (eq < 0) this.flags.add(part)
      else this.values.set(part.slice(0, eq), part.slice(eq + 1))
    }
  }

  has(flag: string): boolean {
    return this.flags.has(flag)
  }

  /** The number after `key=`; throws when it is missing or not a finite number. */
  number(key: string): number {
    const raw = this.values.get(key)
    const value = raw === undefined || raw === '' ? NaN : Number(raw)
    if (!Number.isFinite(value)) throw new InvalidArgumentError(`fingerprint ${key}`, raw, 'a number')
    return value
  }
}
