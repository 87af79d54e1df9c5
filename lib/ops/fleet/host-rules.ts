// What one host obeys of a document (docs/readme/fleet.md, "Canaries"): the base rules and switches, with the
// canary's laid over them when the host is one the canary targets.
import { createHash } from 'crypto'

import type { SwitchMode } from '../../components/switches/switch-layout'
import type { FlatRule } from '../../foundation/live-rules/live-rules'
import type { RouteRule } from '../../components/routing/route-rules'
import type { Canary, ComponentEntry, RuleDocument } from './rule-document'

/** Who a host is, for canaries: its id (the host name by default) and its labels. */
export interface HostIdentity {
  host: string
  labels: Readonly<Record<string, string>>
}

/** The rules and switches one host obeys: what the watcher writes to the host's region. */
export interface HostRules {
  version: number
  /** This host takes the document's canary. */
  canary: boolean
  components: Record<string, ComponentEntry>
  /** Board to target to mode. */
  switches: Record<string, Record<string, SwitchMode>>
  /** Gray router to its rules (absent when the document routes nothing). */
  routing?: Record<string, RouteRule[]>
}

export const NO_RULES: HostRules = Object.freeze({ version: 0, canary: false, components: {}, switches: {} })

/** Where `host` falls in [0, 1) for the canary started at `version`: another spread for every canary. */
export function hostPosition(host: string, version: number): number {
  return createHash('sha256').update(`${version}:${host}`).digest().readUInt32BE(0) / 2 ** 32
}

/** Whether the canary reaches `identity`: within its share (if given) and carrying its labels (if given). */
export function inCanary(canary: Canary, identity: HostIdentity): boolean {
  const { share, labels } = canary.target
  if (share !== undefined && !(hostPosition(identity.host, canary.version) < share)) return false
  if (labels !== undefined) {
    for (const [key, value] of Object.entries(labels)) if (identity.labels[key] !== value) return false
  }
  return true
}

/** The rules and switches `identity` obeys under `doc`. */
export function hostRules(doc: RuleDocument, identity: HostIdentity): HostRules {
  const canary = doc.canary !== undefined && inCanary(doc.canary, identity)
  const components: Record<string, ComponentEntry> = {}
  for (const [name, entry] of Object.entries(doc.components)) components[name] = { ...entry }
  const switches: Record<string, Record<string, SwitchMode>> = {}
  for (const [board, modes] of Object.entries(doc.switches))
    switches[board] = { ...modes } as Record<string, SwitchMode>
  if (canary && doc.canary !== undefined) {
    for (const [name, entry] of Object.entries(doc.canary.components)) {
      const base = components[name] ?? {}
      const merged: ComponentEntry = { ...base, ...entry }
      if (base.rules !== undefined || entry.rules !== undefined) merged.rules = { ...base.rules, ...entry.rules }
      components[name] = merged
    }
    for (const [board, modes] of Object.entries(doc.canary.switches)) {
      const merged = { ...switches[board] }
      for (const [target, mode] of Object.entries(modes)) {
        if (mode === null) delete merged[target]
        else merged[target] = mode
      }
      switches[board] = merged
    }
  }
  const routing: Record<string, RouteRule[]> = {}
  for (const [router, entry] of Object.entries(doc.routing ?? {})) routing[router] = entry.rules
  // A canary's router takes the canary's rules whole: a rule list is ordered, so it is not merged.
  if (canary) for (const [router, entry] of Object.entries(doc.canary?.routing ?? {})) routing[router] = entry.rules
  const rules: HostRules = { version: doc.version, canary, components, switches }
  if (Object.keys(routing).length > 0) rules.routing = routing
  return rules
}

/**
 * The entry that applies to the region of `kind` and `shared` name: the component named exactly, else the keyed
 * collection (`<kind>.<prefix>.*`) with the longest prefix the shared name starts with.
 */
export function entryFor(rules: HostRules, kind: string, shared: string): ComponentEntry | undefined {
  const exact = rules.components[`${kind}.${shared}`]
  if (exact !== undefined) return exact
  let best: ComponentEntry | undefined
  let bestLength = -1
  for (const [name, entry] of Object.entries(rules.components)) {
    if (!name.startsWith(`${kind}.`) || !name.endsWith('.*')) continue
    const prefix = name.slice(kind.length + 1, -1) // keeps the dot: `clients.`
    if (shared.startsWith(prefix) && prefix.length > bestLength) {
      best = entry
      bestLength = prefix.length
    }
  }
  return best
}

/**
 * What a component's entry makes its region obey, as a live rule: its rule fields, and its shadow flag as the
 * `shadow` field (docs/rules/shadow.md); undefined when the entry names neither.
 */
export function entryRule(entry: ComponentEntry | undefined): FlatRule | undefined {
  if (entry === undefined || (entry.rules === undefined && entry.shadow === undefined)) return undefined
  const rule: FlatRule = { ...entry.rules }
  if (entry.shadow !== undefined) rule.shadow = entry.shadow ? 1 : 0
  return rule
}
