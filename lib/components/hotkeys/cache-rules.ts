import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkNumber } from '../../foundation/common/validate'

/** A rule naming one key exactly. */
export interface KeyRule {
  key: string
  /** ms; allow rules only (default: the cache's ttl). */
  ttl?: number
}

/** A rule matching keys by regular expression (unanchored, like the reference's Go regexp.Match). */
export interface PatternRule {
  pattern: RegExp | string
  /** ms; allow rules only (default: the cache's ttl). */
  ttl?: number
}

export type CacheRule = KeyRule | PatternRule

interface CompiledRule {
  key: string | undefined
  pattern: RegExp | undefined
  ttl: number
}

/** The longest part of a key a pattern rule is tested on (its first characters). */
export const MAX_PATTERN_INPUT = 256

function compilePattern(field: string, pattern: unknown): RegExp {
  if (pattern instanceof RegExp) {
    // A global or sticky RegExp remembers lastIndex between tests and would skip matches: drop those flags.
    return new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''))
  }
  if (typeof pattern !== 'string')
    throw new InvalidOptionError(field, pattern, 'a RegExp or a regular expression string')
  try {
    return new RegExp(pattern)
  } catch {
    throw new InvalidOptionError(field, pattern, 'a valid regular expression')
  }
}

/**
 * An ordered list of allow or deny rules; the first that matches wins. Ours: a pattern rule matches only through
 * its pattern and a key rule only by equality (the reference also compares every pattern rule's empty key field
 * with the key, so the empty key matched every pattern rule).
 */
export class CacheRules {
  private readonly rules: CompiledRule[]

  constructor(field: string, rules: unknown, defaultTtl: number) {
    if (rules === undefined) rules = []
    if (!Array.isArray(rules)) throw new InvalidOptionError(field, rules, 'an array of { key } or { pattern } rules')
    this.rules = rules.map((rule: unknown, i) => {
      const at = `${field}[${i}]`
      if (rule === null || typeof rule !== 'object')
        throw new InvalidOptionError(at, rule, 'a { key } or { pattern } rule')
      const r = rule as Partial<KeyRule & PatternRule>
      if ((r.key === undefined) === (r.pattern === undefined)) {
        throw new InvalidOptionError(at, rule, 'a rule with exactly one of `key` and `pattern`')
      }
      if (r.key !== undefined && typeof r.key !== 'string') throw new InvalidOptionError(`${at}.key`, r.key, 'a string')
      const ttl = r.ttl === undefined ? defaultTtl : checkNumber(`${at}.ttl`, r.ttl, { above: 0 })
      const pattern = r.pattern === undefined ? undefined : compilePattern(`${at}.pattern`, r.pattern)
      return { key: r.key, pattern, ttl }
    })
  }

  get empty(): boolean {
    return this.rules.length === 0
  }

  /** The TTL of the first rule matching `key`, or -1 when none does. */
  match(key: string): number {
    // A pattern reads at most the first MAX_PATTERN_INPUT characters of a key (which may come from a request), so
    // that a pattern with backtracking costs bounded time however long the key (docs/guide/trust.md).
    const text = key.length <= MAX_PATTERN_INPUT ? key : key.slice(0, MAX_PATTERN_INPUT)
    for (const rule of this.rules) {
      if (rule.pattern === undefined ? rule.key === key : rule.pattern.test(text)) return rule.ttl
    }
    return -1
  }
}
