// Gray routing's rules (docs/readme/integrations.md, "Gray routing"): `when` expressions parsed once, when the rules
// change, into terms that route() evaluates with string comparisons only (no regular expression per request).
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

/** One routing rule: requests that match `when` go to `group` (the first rule that matches wins). */
export interface RouteRule {
  /** Terms joined by `&&`: `header(x-version) = v2 && weight = 30` (docs/readme/integrations.md, "Gray routing"). */
  when: string
  group: string
}

/** What a router takes at most (docs/guide/trust.md). */
export const ROUTING_LIMITS = {
  rules: 64,
  termsPerRule: 8,
  /** Characters of a name or a value in a term, and of a rule's `when`. */
  text: 256,
  /** Characters of every rule's `when` and `group` together. */
  ruleText: 16 * 1024,
  groups: 16,
} as const

/** Term kinds. */
export const TERM = {
  headerEquals: 1,
  headerDiffers: 2,
  headerPresent: 3,
  cookieEquals: 4,
  queryEquals: 5,
  methodEquals: 6,
  pathPrefix: 7,
} as const

export interface CompiledTerm {
  kind: number
  /** Header names lower-cased; a cookie's or query parameter's name followed by `=` (what is searched for). */
  name: string
  value: string
}

export interface CompiledRule {
  terms: CompiledTerm[]
  /** Share of the requests that pass the terms, 0-100. */
  weight: number
  /** Index of the group in the router's groups (-1 when compiled without groups). */
  group: number
  /** What a key's hash is mixed with: the rule without its weight, so that a raised weight only adds clients. */
  seed: number
}

/** Makes the error a bad rule gets: InvalidOptionError from a constructor, InvalidArgumentError otherwise. */
export type RuleError = (field: string, value: unknown, expected: string) => Error

const argumentError: RuleError = (field, value, expected) => new InvalidArgumentError(field, value, expected)

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const groupPattern = /^[A-Za-z0-9._-]{1,64}$/
const comparison = /^(header|cookie|query)\(\s*([^()\s]+)\s*\)\s*(!=|=)\s*(.+)$/
const presence = /^header\(\s*([^()\s]+)\s*\)$/

/** FNV-1a of a string's UTF-16 code units, then murmur3's finaliser: fixed, seedless, the same on every host. */
export function stableHash(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** A value: no control character (spaces inside are kept). */
function printable(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 32 || c === 127) return false
  }
  return value.length > 0
}

/** Checks a group's name (shown in metrics and `bulwark top`). */
export function isGroupName(name: unknown): name is string {
  return typeof name === 'string' && groupPattern.test(name) && name !== '__proto__'
}

function compileTerm(term: string, fail: (expected: string) => Error): CompiledTerm | number {
  const weight = /^weight\s*=\s*(\S*)$/.exec(term)
  if (weight !== null) {
    const w = /^\d{1,3}$/.test(weight[1]) ? Number(weight[1]) : NaN
    if (!(w <= 100)) throw fail('weight = <an integer 0-100>')
    return w
  }
  const method = /^method\s*=\s*([A-Za-z]+)$/.exec(term)
  if (method !== null) return { kind: TERM.methodEquals, name: '', value: method[1].toUpperCase() }
  const path = /^path\s*\^=\s*(\S+)$/.exec(term)
  if (path !== null) {
    if (!path[1].startsWith('/') || /[?#]/.test(path[1])) throw fail("a path prefix starting with '/', without ? or #")
    return { kind: TERM.pathPrefix, name: '', value: path[1] }
  }
  const present = presence.exec(term)
  if (present !== null) {
    if (!token.test(present[1])) throw fail('a header name (an HTTP token)')
    return { kind: TERM.headerPresent, name: present[1].toLowerCase(), value: '' }
  }
  const compared = comparison.exec(term)
  if (compared === null)
    throw fail(
      'header(<name>) = <value>, header(<name>) != <value>, header(<name>), cookie(<name>) = <value>, ' +
        'query(<name>) = <value>, method = <METHOD>, path ^= <prefix> or weight = <0-100>',
    )
  const [, source, name, operator, raw] = compared
  const value = raw.trim()
  if (!token.test(name)) throw fail(`a ${source} name (letters, digits and !#$%&'*+.^_\`|~-)`)
  if (!printable(value)) throw fail('a value without control characters')
  if (source === 'header')
    return {
      kind: operator === '=' ? TERM.headerEquals : TERM.headerDiffers,
      name: name.toLowerCase(),
      value,
    }
  if (operator !== '=') throw fail(`${source}(<name>) = <value> (only headers take !=)`)
  return { kind: source === 'cookie' ? TERM.cookieEquals : TERM.queryEquals, name: `${name}=`, value }
}

function compileRule(
  raw: unknown,
  index: number,
  groups: readonly string[] | undefined,
  fail: RuleError,
): { rule: RouteRule; compiled: CompiledRule } {
  const path = `rules[${index}]`
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw fail(path, raw, '{ when, group }: a rule object')
  const r = raw as Record<string, unknown>
  for (const key of Object.keys(r))
    if (key !== 'when' && key !== 'group') throw fail(`${path}.${key}`, r[key], 'absent (a rule has when and group)')
  const { when, group } = r
  if (!isGroupName(group)) throw fail(`${path}.group`, group, 'a group name of 1-64 characters from A-Z a-z 0-9 . _ -')
  const groupIndex = groups === undefined ? -1 : groups.indexOf(group)
  if (groups !== undefined && groupIndex < 0)
    throw fail(`${path}.group`, group, `one of the router's groups (${groups.join(', ')})`)
  if (typeof when !== 'string' || when.trim() === '' || when.length > ROUTING_LIMITS.text)
    throw fail(`${path}.when`, when, `terms joined by && (1-${ROUTING_LIMITS.text} characters)`)
  const parts = when.split('&&').map((t) => t.trim())
  if (parts.length > ROUTING_LIMITS.termsPerRule)
    throw fail(`${path}.when`, when, `at most ${ROUTING_LIMITS.termsPerRule} terms`)
  const terms: CompiledTerm[] = []
  let weight: number | undefined
  parts.forEach((term, t) => {
    const termFail = (expected: string) => fail(`${path}.when`, term, `${expected} (term ${t + 1})`)
    const compiled = compileTerm(term, termFail)
    if (typeof compiled !== 'number') return void terms.push(compiled)
    if (weight !== undefined) throw termFail('one weight a rule')
    weight = compiled
  })
  // The seed leaves the weight out: raising it from 30 to 40 keeps the 30 % of clients in and adds others.
  const seedText = `${group}|${parts.filter((p) => !p.startsWith('weight')).join('&&')}`
  return {
    rule: { when, group },
    compiled: { terms, weight: weight ?? 100, group: groupIndex, seed: stableHash(seedText) },
  }
}

/**
 * Checks and compiles a rule list, refused whole on the first bad rule with an error naming its index, the term and
 * its value. Without `groups`, any well-formed group name passes (a document checked before it reaches a host).
 */
export function compileRules(
  rules: unknown,
  groups: readonly string[] | undefined,
  fail: RuleError = argumentError,
): { rules: RouteRule[]; compiled: CompiledRule[] } {
  if (!Array.isArray(rules)) throw fail('rules', rules, 'an array of { when, group }')
  if (rules.length > ROUTING_LIMITS.rules) throw fail('rules', rules, `at most ${ROUTING_LIMITS.rules} rules`)
  let text = 0
  const checked: RouteRule[] = []
  const compiled: CompiledRule[] = []
  rules.forEach((raw, i) => {
    const one = compileRule(raw, i, groups, fail)
    text += one.rule.when.length + one.rule.group.length
    if (text > ROUTING_LIMITS.ruleText)
      throw fail(`rules[${i}]`, raw, `within ${ROUTING_LIMITS.ruleText} characters of rules in all`)
    checked.push(one.rule)
    compiled.push(one.compiled)
  })
  return { rules: checked, compiled }
}

/** Checks a router's groups: 1-16 distinct names. */
export function checkGroups(groups: unknown, fail: RuleError): string[] {
  if (!Array.isArray(groups) || groups.length === 0 || groups.length > ROUTING_LIMITS.groups)
    throw fail('groups', groups, `an array of 1-${ROUTING_LIMITS.groups} group names`)
  groups.forEach((g, i) => {
    if (!isGroupName(g)) throw fail(`groups[${i}]`, g, 'a group name of 1-64 characters from A-Z a-z 0-9 . _ -')
    if (groups.indexOf(g) !== i) throw fail(`groups[${i}]`, g, 'a name not given before')
  })
  return groups.slice() as string[]
}
