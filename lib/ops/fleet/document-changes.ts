// Changes to a rule document (docs/readme/fleet.md, "History and rollback"): each makes the next version, with its
// author, time and steps (the value at a path before and after), kept in the document's history so that a
// rollback can undo them. Every function returns a new document, checked whole; the one given is not changed.
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import type { FlatRule } from '../../foundation/live-rules/live-rules'
import type { SwitchMode } from '../../components/switches/switch-layout'
import type { RouteRule } from '../../components/routing/route-rules'
import {
  type CanaryTarget,
  type ChangeAction,
  type ChangeStep,
  checkDocument,
  LIMITS,
  type RuleDocument,
} from './rule-document'

/** Who makes a change, and why. */
export interface ChangeMeta {
  author: string
  message?: string
  /** ISO 8601 (default: now). */
  time?: string
}

type Tree = Record<string, unknown>

const clone = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T))

function getAt(root: Tree, path: readonly string[]): unknown {
  let node: unknown = root
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined
    node = (node as Tree)[key]
  }
  return node
}

/** Sets (or with undefined, deletes) the value at `path`, removing the objects a deletion leaves empty. */
function setAt(root: Tree, path: readonly string[], value: unknown): void {
  const nodes: Tree[] = [root]
  for (const key of path.slice(0, -1)) {
    const parent = nodes[nodes.length - 1]
    const child = Object.hasOwn(parent, key) ? parent[key] : undefined
    if (child === null || typeof child !== 'object') {
      if (value === undefined) return
      parent[key] = {}
    }
    nodes.push(parent[key] as Tree)
  }
  const last = path[path.length - 1]
  if (value !== undefined) {
    nodes[nodes.length - 1][last] = clone(value)
    return
  }
  delete nodes[nodes.length - 1][last]
  // Empty containers go, except the document's own top-level maps.
  for (let i = nodes.length - 1; i >= 2; i--) {
    if (Object.keys(nodes[i]).length > 0) break
    delete nodes[i - 1][path[i - 1]]
  }
}

/** Applies `steps` (their `after` values) to a copy of `doc` as its next version, recorded in its history. */
export function commit(doc: RuleDocument, action: ChangeAction, steps: ChangeStep[], meta: ChangeMeta): RuleDocument {
  const next = clone(doc) as unknown as Tree
  const recorded: ChangeStep[] = []
  for (const step of steps) {
    const before = getAt(next, step.path)
    if (JSON.stringify(before) === JSON.stringify(step.after)) continue
    setAt(next, step.path, step.after)
    recorded.push({ path: step.path, before: clone(before), after: clone(step.after) })
  }
  const result = next as unknown as RuleDocument
  result.version = doc.version + 1
  const record = {
    version: result.version,
    author: meta.author,
    time: meta.time ?? new Date().toISOString(),
    action,
    changes: recorded,
    ...(meta.message === undefined ? {} : { message: meta.message }),
  }
  result.history = [...doc.history, record].slice(-LIMITS.history)
  // The oldest changes go first when the document would outgrow its bound.
  while (result.history.length > 1 && Buffer.byteLength(JSON.stringify(result)) > LIMITS.documentBytes)
    result.history.shift()
  return checkDocument(JSON.parse(JSON.stringify(result)))
}

function sameTarget(a: CanaryTarget, b: CanaryTarget): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Where a change goes: the base, or the canary (started by this change, or the one under way with that target). */
function scope(doc: RuleDocument, canary: CanaryTarget | undefined): { prefix: string[]; start: ChangeStep[] } {
  if (canary === undefined) return { prefix: [], start: [] }
  if (doc.canary !== undefined && !sameTarget(doc.canary.target, canary))
    throw new InvalidArgumentError(
      'canary',
      canary,
      `the target of the canary under way (${JSON.stringify(doc.canary.target)}): promote or abort it first`,
    )
  const start: ChangeStep[] =
    doc.canary === undefined
      ? [{ path: ['canary'], after: { version: doc.version + 1, target: canary, components: {}, switches: {} } }]
      : []
  return { prefix: ['canary'], start }
}

/** Sets rule fields (and the shadow flag) of `component`, for every host or for a canary's. */
export function setComponent(
  doc: RuleDocument,
  component: string,
  change: { rules?: FlatRule; shadow?: boolean },
  meta: ChangeMeta,
  canary?: CanaryTarget,
): RuleDocument {
  const { prefix, start } = scope(doc, canary)
  const steps = [...start]
  for (const [field, value] of Object.entries(change.rules ?? {}))
    steps.push({ path: [...prefix, 'components', component, 'rules', field], after: value })
  if (change.shadow !== undefined)
    steps.push({ path: [...prefix, 'components', component, 'shadow'], after: change.shadow })
  return commit(doc, canary === undefined ? 'set' : 'canary', steps, meta)
}

/** Sets (a mode) or clears (null) switches of `board`; `clearAll` clears the board's others first. */
export function setSwitches(
  doc: RuleDocument,
  board: string,
  changes: Record<string, SwitchMode | null>,
  clearAll: boolean,
  meta: ChangeMeta,
  canary?: CanaryTarget,
): RuleDocument {
  const { prefix, start } = scope(doc, canary)
  const steps = [...start]
  const current = (getAt(doc as unknown as Tree, [...prefix, 'switches', board]) ?? {}) as Record<string, unknown>
  const base = doc.switches[board] ?? {}
  if (clearAll) {
    for (const target of Object.keys(current)) steps.push({ path: [...prefix, 'switches', board, target] })
    // In a canary, clearing means clearing what the base sets too.
    if (canary !== undefined)
      for (const target of Object.keys(base)) steps.push({ path: [...prefix, 'switches', board, target], after: null })
  }
  for (const [target, mode] of Object.entries(changes)) {
    const cleared = mode === null ? (canary !== undefined && base[target] !== undefined ? null : undefined) : mode
    steps.push({ path: [...prefix, 'switches', board, target], after: cleared })
  }
  return commit(doc, canary === undefined ? 'set' : 'canary', steps, meta)
}

/**
 * Sets a gray router's rules (docs/readme/fleet.md, "Gray routing"), for every host or for a canary's; `undefined`
 * removes the router from the document (its hosts' routers then route every request to their fallback).
 */
export function setRouting(
  doc: RuleDocument,
  router: string,
  rules: RouteRule[] | undefined,
  meta: ChangeMeta,
  canary?: CanaryTarget,
): RuleDocument {
  const { prefix, start } = scope(doc, canary)
  const steps = [...start, { path: [...prefix, 'routing', router, 'rules'], after: rules }]
  return commit(doc, canary === undefined ? 'set' : 'canary', steps, meta)
}

/** The canary's rules and switches become every host's. */
export function promote(doc: RuleDocument, meta: ChangeMeta): RuleDocument {
  const canary = doc.canary
  if (canary === undefined) throw new InvalidArgumentError('canary', undefined, 'a canary under way to promote')
  const steps: ChangeStep[] = []
  for (const [name, entry] of Object.entries(canary.components)) {
    for (const [field, value] of Object.entries(entry.rules ?? {}))
      steps.push({ path: ['components', name, 'rules', field], after: value })
    if (entry.shadow !== undefined) steps.push({ path: ['components', name, 'shadow'], after: entry.shadow })
  }
  for (const [board, modes] of Object.entries(canary.switches))
    for (const [target, mode] of Object.entries(modes))
      steps.push({ path: ['switches', board, target], after: mode === null ? undefined : mode })
  for (const [router, entry] of Object.entries(canary.routing ?? {}))
    steps.push({ path: ['routing', router, 'rules'], after: entry.rules })
  steps.push({ path: ['canary'] })
  return commit(doc, 'promote', steps, meta)
}

/** Drops the canary: its hosts go back to the base rules and switches. */
export function abort(doc: RuleDocument, meta: ChangeMeta): RuleDocument {
  if (doc.canary === undefined) throw new InvalidArgumentError('canary', undefined, 'a canary under way to abort')
  return commit(doc, 'abort', [{ path: ['canary'] }], meta)
}

/**
 * Returns the rules and switches (and canary) to what they were at `version`, by undoing every change since, newest
 * first, as a new version. The history must reach back to `version`.
 */
export function rollback(doc: RuleDocument, version: number, meta: ChangeMeta): RuleDocument {
  if (!Number.isSafeInteger(version) || version < 0 || version >= doc.version)
    throw new InvalidArgumentError('version', version, `an earlier version than ${doc.version}`)
  const undone = doc.history.filter((r) => r.version > version)
  const oldest = doc.history[0]?.version ?? doc.version + 1
  if (undone.length !== doc.version - version || oldest > version + 1)
    throw new InvalidArgumentError('version', version, `a version the history still holds (${oldest - 1} or later)`)
  const steps: ChangeStep[] = []
  for (const record of [...undone].reverse())
    for (const step of [...record.changes].reverse()) steps.push({ path: step.path, after: step.before })
  return commit(doc, 'rollback', steps, { ...meta, message: meta.message ?? `rollback to version ${version}` })
}
