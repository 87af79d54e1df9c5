import * as os from 'os'

import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { checkNamespace } from '../../foundation/regions/namespace'
import type { ChangeMeta } from './document-changes'
import { openRuleSource } from './open-source'
import { checkTarget, type CanaryTarget, emptyDocument, parseRuleDocument, type RuleDocument } from './rule-document'
import type { RuleSource } from './rule-source'

/** The options the source commands share (`bulwark set --source`, `bulwark rules`). */
export interface SourceArgs {
  source: string
  namespace: string | undefined
  author: string
  message: string | undefined
  canary: CanaryTarget | undefined
  json: boolean
  limit: number
  /** What is left: the command's own arguments. */
  rest: string[]
}

/** `10%`, `0.1`, `zone=a,tier=edge`, or both (`10%,zone=a`): which hosts a canary reaches. */
export function parseCanary(spec: string): CanaryTarget {
  const target: { share?: number; labels?: Record<string, string> } = {}
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=')
    if (eq > 0) {
      target.labels = { ...target.labels, [part.slice(0, eq)]: part.slice(eq + 1) }
    } else {
      const share = part.endsWith('%') ? Number(part.slice(0, -1)) / 100 : Number(part)
      target.share = part.trim() === '' ? NaN : share
    }
  }
  return checkTarget(target, '--canary')
}

/** Parses the shared options out of `args`; throws InvalidArgumentError for a bad or missing one. */
export function parseSourceArgs(args: readonly string[]): SourceArgs {
  const parsed: SourceArgs = {
    source: '', // always named: a pod's own BULWARK_RULES must not turn a command for one host into one for all
    namespace: process.env.BULWARK_NAMESPACE || undefined,
    author: process.env.BULWARK_AUTHOR || `${os.userInfo().username}@${os.hostname()}`,
    message: undefined,
    canary: undefined,
    json: false,
    limit: 20,
    rest: [],
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const value = () => {
      const v = args[++i]
      if (v === undefined) throw new InvalidArgumentError(arg, v, 'a value')
      return v
    }
    if (arg === '--source') parsed.source = value()
    else if (arg === '--namespace') parsed.namespace = checkNamespace('--namespace', value())
    else if (arg === '--author') parsed.author = value().slice(0, 200)
    else if (arg === '--message' || arg === '-m') parsed.message = value().slice(0, 1000)
    else if (arg === '--canary') parsed.canary = parseCanary(value())
    else if (arg === '--json') parsed.json = true
    else if (arg === '--limit') parsed.limit = Number(value())
    else parsed.rest.push(arg)
  }
  if (parsed.source === '')
    throw new InvalidArgumentError('--source', undefined, 'a rule source URL (or BULWARK_RULES)')
  if (!(Number.isInteger(parsed.limit) && parsed.limit > 0))
    throw new InvalidArgumentError('--limit', parsed.limit, 'an integer > 0')
  return parsed
}

/** Opens the source the arguments name. */
export function sourceOf(args: SourceArgs): { source: RuleSource; namespace: string } {
  return openRuleSource(args.source, args.namespace)
}

/** The document a source holds now (an empty one if none was written) and its revision. */
export async function readDocument(source: RuleSource): Promise<{ doc: RuleDocument; revision: number | undefined }> {
  const read = await source.read()
  if (read === undefined) return { doc: emptyDocument(), revision: undefined }
  return { doc: parseRuleDocument(read.text), revision: read.revision }
}

/**
 * Writes `change(document)` through the source, as the next version: read, change, compare-and-set, again (a few
 * times) when another writer came in between. Resolves with the document written.
 */
export async function editDocument(
  source: RuleSource,
  change: (doc: RuleDocument, meta: ChangeMeta) => RuleDocument,
  meta: ChangeMeta,
): Promise<RuleDocument> {
  if (source.write === undefined)
    throw new InvalidArgumentError('--source', source.description, 'a source that can be written')
  for (let attempt = 0; attempt < 5; attempt++) {
    const { doc, revision } = await readDocument(source)
    const next = change(doc, meta)
    if ((await source.write(JSON.stringify(next), revision)) !== undefined) return next
  }
  throw new Error(`${source.description}: other writers kept changing the rules; try again`)
}
