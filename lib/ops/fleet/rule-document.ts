// What a rule source holds for one application (docs/readme/fleet.md, "The document"): the rules and switches in
// force, an optional canary, and the history of changes. Everything read from a source goes through
// parseRuleDocument: bounded in size, checked field by field, refused whole when anything is wrong.
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import type { FlatRule } from '../../foundation/live-rules/live-rules'
import type { SwitchMode } from '../../components/switches/switch-layout'
import { checkSwitch } from '../../components/switches/switchboard'
import { checkRouting, type RoutingEntry } from './routing-section'
import { RULE_KINDS } from './rule-kinds'

/** The document format this bulwark writes and reads. */
export const DOCUMENT_FORMAT = 1
/** Bounds on what a source may hold: a host never parses or keeps more (docs/guide/trust.md). */
export const LIMITS = {
  documentBytes: 1 << 20,
  components: 1000,
  boards: 100,
  switchesPerBoard: 4096,
  history: 100,
  changesPerEntry: 1000,
  text: 1000,
  labels: 16,
} as const

export type { RoutingEntry } from './routing-section'

/** One component's entry: rule fields (flat, `queueDelay.target`), and its shadow flag. */
export interface ComponentEntry {
  rules?: FlatRule
  /** Decide as usual but enforce nothing: the component's live `shadow` field (docs/rules/shadow.md). */
  shadow?: boolean
}

/** A board's switches, target to mode (in a canary, null clears a switch the base sets). */
export type BoardSwitches = Record<string, SwitchMode | null>

/** Which hosts a canary reaches: a share of them (by a hash of the host's id), or those with every label given. */
export interface CanaryTarget {
  share?: number
  labels?: Record<string, string>
}

export interface Canary {
  /** The version that started it. */
  version: number
  target: CanaryTarget
  components: Record<string, ComponentEntry>
  switches: Record<string, BoardSwitches>
  /** Routers whose rules the canary replaces (whole: a rule list is ordered). */
  routing?: Record<string, RoutingEntry>
}

/** One step of a change: the value at `path` before and after (absent: no value). */
export interface ChangeStep {
  path: string[]
  before?: unknown
  after?: unknown
}

export type ChangeAction = 'set' | 'canary' | 'promote' | 'abort' | 'rollback' | 'import'

export interface ChangeRecord {
  version: number
  author: string
  /** ISO 8601. */
  time: string
  action: ChangeAction
  message?: string
  changes: ChangeStep[]
}

export interface RuleDocument {
  format: number
  /** +1 with every change. */
  version: number
  components: Record<string, ComponentEntry>
  /** Boards by their shared name; each holds switches only (a cleared switch is absent). */
  switches: Record<string, BoardSwitches>
  /** Gray routers by their shared name (absent when the document routes nothing). */
  routing?: Record<string, RoutingEntry>
  canary?: Canary
  /** The newest last, at most LIMITS.history. */
  history: ChangeRecord[]
}

/** An empty document: what a source holds before its first change. */
export function emptyDocument(): RuleDocument {
  return { format: DOCUMENT_FORMAT, version: 0, components: {}, switches: {}, history: [] }
}

// Names that become keys of plain objects: never one an object already has (`__proto__` would replace a prototype).
const reserved = new Set(Object.getOwnPropertyNames(Object.prototype))
const sharedPattern = { test: (name: string) => /^[A-Za-z0-9._-]{1,120}$/.test(name) && !reserved.has(name) }
const labelPattern = { test: (name: string) => /^[A-Za-z0-9._/-]{1,63}$/.test(name) && !reserved.has(name) }
const ACTIONS: readonly ChangeAction[] = ['set', 'canary', 'promote', 'abort', 'rollback', 'import']

/** A component's name in a document: `<kind>.<shared>`, or `<kind>.<shared>.*` for every key of a keyed collection. */
export function splitComponent(name: string): { kind: string; shared: string; keyed: boolean } | undefined {
  const dot = name.indexOf('.')
  if (dot <= 0) return undefined
  const kind = name.slice(0, dot)
  const keyed = name.endsWith('.*')
  const shared = name.slice(dot + 1, keyed ? -2 : undefined)
  if (RULE_KINDS[kind] === undefined || !sharedPattern.test(shared)) return undefined
  return { kind, shared, keyed }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function object(path: string, value: unknown, max: number): Record<string, unknown> {
  if (!isObject(value)) throw new InvalidArgumentError(path, value, 'an object')
  if (Object.keys(value).length > max) throw new InvalidArgumentError(path, value, `at most ${max} entries`)
  return value
}

function text(path: string, value: unknown, max: number = LIMITS.text): string {
  if (typeof value !== 'string' || value.length > max)
    throw new InvalidArgumentError(path, value, `a string of at most ${max} characters`)
  return value
}

function integer(path: string, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new InvalidArgumentError(path, value, 'an integer >= 0')
  return value as number
}

/** Checks one component's entry: its name, its rule (with its kind's own checks) and its shadow flag. */
export function checkComponent(name: string, entry: unknown, path = `components.${name}`): ComponentEntry {
  const parts = splitComponent(name)
  if (parts === undefined)
    throw new InvalidArgumentError(
      'component',
      name,
      `<kind>.<shared> or <kind>.<shared>.* with kind one of ${Object.keys(RULE_KINDS).join(', ')}`,
    )
  const e = object(path, entry, 2)
  for (const key of Object.keys(e))
    if (key !== 'rules' && key !== 'shadow') throw new InvalidArgumentError(`${path}.${key}`, e[key], 'absent')
  const checked: ComponentEntry = {}
  if (e.shadow !== undefined) {
    if (typeof e.shadow !== 'boolean') throw new InvalidArgumentError(`${path}.shadow`, e.shadow, 'a boolean')
    checked.shadow = e.shadow
  }
  if (e.rules !== undefined) {
    const kind = RULE_KINDS[parts.kind]
    const rules = object(`${path}.rules`, e.rules, kind.fields.length)
    for (const [field, value] of Object.entries(rules)) {
      if (!kind.fields.includes(field))
        throw new InvalidArgumentError(
          `${path}.rules.${field}`,
          value,
          `a field of ${parts.kind}: ${kind.fields.join(', ')}`,
        )
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new InvalidArgumentError(`${path}.rules.${field}`, value, 'a finite number')
    }
    try {
      kind.check(rules as FlatRule)
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error
      // The component's own words, naming the field where it sits in the document.
      const expected = /must be (.*), got /s.exec(error.message)?.[1] ?? `valid for ${parts.kind}`
      throw new InvalidArgumentError(`${path}.rules.${error.field}`, error.value, expected)
    }
    checked.rules = { ...(rules as FlatRule) }
  }
  return checked
}

/** Checks a board's switches with the switchboard's own checks (null clears: allowed in a canary only). */
export function checkBoard(board: string, value: unknown, allowClear: boolean, path: string): BoardSwitches {
  if (!sharedPattern.test(board)) throw new InvalidArgumentError(path, board, 'a board name (a shared name)')
  const switches = object(path, value, LIMITS.switchesPerBoard)
  for (const [target, mode] of Object.entries(switches)) {
    if (mode === null && !allowClear) throw new InvalidArgumentError(`${path}.${target}`, mode, 'a mode')
    checkSwitch(target, mode)
  }
  return { ...(switches as BoardSwitches) }
}

function components(path: string, value: unknown): Record<string, ComponentEntry> {
  const entries = object(path, value, LIMITS.components)
  const checked: Record<string, ComponentEntry> = {}
  for (const [name, entry] of Object.entries(entries)) checked[name] = checkComponent(name, entry, `${path}.${name}`)
  return checked
}

function boards(path: string, value: unknown, allowClear: boolean): Record<string, BoardSwitches> {
  const entries = object(path, value, LIMITS.boards)
  const checked: Record<string, BoardSwitches> = {}
  for (const [board, switches] of Object.entries(entries))
    checked[board] = checkBoard(board, switches, allowClear, `${path}.${board}`)
  return checked
}

/** Checks a canary's target: a share in (0, 1], or labels (both may be given: a host must match both). */
export function checkTarget(value: unknown, path = 'canary.target'): CanaryTarget {
  const t = object(path, value, 2)
  const target: CanaryTarget = {}
  if (t.share !== undefined) {
    if (typeof t.share !== 'number' || !(t.share > 0 && t.share <= 1))
      throw new InvalidArgumentError(`${path}.share`, t.share, 'a share in (0, 1]')
    target.share = t.share
  }
  if (t.labels !== undefined) {
    const labels = object(`${path}.labels`, t.labels, LIMITS.labels)
    for (const [k, v] of Object.entries(labels))
      if (!labelPattern.test(k) || typeof v !== 'string' || !labelPattern.test(v))
        throw new InvalidArgumentError(`${path}.labels.${k}`, v, 'a label: 1-63 characters of A-Z a-z 0-9 . _ / -')
    target.labels = { ...(labels as Record<string, string>) }
  }
  if (target.share === undefined && target.labels === undefined)
    throw new InvalidArgumentError(path, value, 'a share, labels or both')
  return target
}

function history(value: unknown): ChangeRecord[] {
  if (!Array.isArray(value) || value.length > LIMITS.history)
    throw new InvalidArgumentError('history', value, `an array of at most ${LIMITS.history} changes`)
  return value.map((raw, i) => {
    const path = `history[${i}]`
    const r = object(path, raw, 6)
    if (!ACTIONS.includes(r.action as ChangeAction))
      throw new InvalidArgumentError(`${path}.action`, r.action, ACTIONS.join(' | '))
    if (!Array.isArray(r.changes) || r.changes.length > LIMITS.changesPerEntry)
      throw new InvalidArgumentError(`${path}.changes`, r.changes, `at most ${LIMITS.changesPerEntry} steps`)
    const changes = r.changes.map((step: unknown, j: number) => {
      const s = object(`${path}.changes[${j}]`, step, 3)
      if (
        !Array.isArray(s.path) ||
        s.path.length === 0 ||
        s.path.length > 6 ||
        !s.path.every((p) => typeof p === 'string' && p.length <= 250)
      )
        throw new InvalidArgumentError(`${path}.changes[${j}].path`, s.path, 'an array of 1-6 strings')
      return s as unknown as ChangeStep
    })
    const record: ChangeRecord = {
      version: integer(`${path}.version`, r.version),
      author: text(`${path}.author`, r.author, 200),
      time: text(`${path}.time`, r.time, 40),
      action: r.action as ChangeAction,
      changes,
    }
    if (r.message !== undefined) record.message = text(`${path}.message`, r.message)
    return record
  })
}

/** Checks a document as parsed JSON; throws InvalidArgumentError naming the first bad field. */
export function checkDocument(value: unknown): RuleDocument {
  const d = object('document', value, 7)
  // A section this bulwark does not know is refused, not dropped: a writer would lose it when it writes back.
  for (const key of Object.keys(d))
    if (!['format', 'version', 'components', 'switches', 'routing', 'canary', 'history'].includes(key))
      throw new InvalidArgumentError(key, d[key], 'absent (a section of a later document format?)')
  if (d.format !== DOCUMENT_FORMAT)
    throw new InvalidArgumentError(
      'format',
      d.format,
      `${DOCUMENT_FORMAT} (this bulwark reads format ${DOCUMENT_FORMAT})`,
    )
  const doc: RuleDocument = {
    format: DOCUMENT_FORMAT,
    version: integer('version', d.version),
    components: components('components', d.components ?? {}),
    switches: boards('switches', d.switches ?? {}, false),
    history: history(d.history ?? []),
  }
  if (d.routing !== undefined) doc.routing = checkRouting('routing', d.routing)
  if (d.canary !== undefined) {
    const c = object('canary', d.canary, 5)
    doc.canary = {
      version: integer('canary.version', c.version),
      target: checkTarget(c.target),
      components: components('canary.components', c.components ?? {}),
      switches: boards('canary.switches', c.switches ?? {}, true),
    }
    if (c.routing !== undefined) doc.canary.routing = checkRouting('canary.routing', c.routing)
  }
  return doc
}

/** A source's text as a document: at most LIMITS.documentBytes of JSON, checked whole. */
export function parseRuleDocument(text: string): RuleDocument {
  if (typeof text !== 'string' || Buffer.byteLength(text) > LIMITS.documentBytes)
    throw new InvalidArgumentError(
      'document',
      `${String(text).slice(0, 40)}...`,
      `JSON of at most ${LIMITS.documentBytes} bytes`,
    )
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new InvalidArgumentError('document', text.slice(0, 40), `JSON (${(error as Error).message})`)
  }
  return checkDocument(value)
}
