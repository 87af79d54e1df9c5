import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import type { FlatRule } from '../../foundation/live-rules/live-rules'
import type { RouteRule } from '../../components/routing/route-rules'
import { parseAssignments } from './set-command'
import { parseSwitchPairs } from './switch-command'
import { setComponent, setRouting, setSwitches } from '../fleet/document-changes'
import { checkRouter } from '../fleet/routing-section'
import { checkComponent, type RuleDocument, splitComponent } from '../fleet/rule-document'
import { RULE_KIND_NAMES } from '../fleet/rule-kinds'
import { editDocument, parseSourceArgs, sourceOf } from '../fleet/source-edit'

export const SOURCE_SET_USAGE = `Usage: bulwark set --source <url> [--namespace <ns>] [--canary <hosts>] [-m <message>] <component> <field>=<value> ...
       bulwark set --source <url> [...] switches.<board> <target>=<mode> ...
       bulwark set --source <url> [...] routing.<router> '<rules as JSON>'

Writes the change to the fleet's rule source (docs/guide/fleet.md): every host that follows it obeys within a
second. <component> is <kind>.<shared> (kinds: ${RULE_KIND_NAMES.join(', ')}), or <kind>.<shared>.* for every key
of a keyed collection; shadow=on|off sets its shadow flag. Switches take the same pairs as on one host. A gray
router takes its whole rule list, [{"when": "...", "group": "..."}, ...] in order (null: the source routes it no
more); each host checks the groups against its router's.

  --source <url>      redis://host:6379, redis+cluster://..., etcd://host:2379, file:///path: always named, so that
                      a command meant for one host never reaches them all
  --namespace <ns>    the application (default: the URL's ?namespace=, else BULWARK_NAMESPACE)
  --canary <hosts>    only those hosts first: 10% of them, hosts with labels (zone=a), or both (10%,zone=a);
                      then 'bulwark rules promote' (all hosts) or 'bulwark rules abort'
  --author <name>     who makes the change (default: BULWARK_AUTHOR, else user@host)
  -m <message>        why, kept in the history

Examples:
  bulwark set --source etcd://etcd:2379 --namespace shop bbr.api cpuThreshold=700
  bulwark set --source redis://redis:6379/0?namespace=shop --canary 10% token-bucket.gateway rate=30000
  bulwark set --source redis://redis:6379/0?namespace=shop switches.api priority:low=shed
  bulwark set --source file:///etc/bulwark/rules.json routing.checkout \
    '[{"when": "header(x-version) = v2 && weight = 30", "group": "v2"}]'`

/** `field=value` pairs as a component's change: rule fields (numbers) and the shadow flag. */
function componentChange(pairs: readonly string[]): { rules?: FlatRule; shadow?: boolean } {
  const shadowPair = pairs.find((p) => p.startsWith('shadow='))
  const fields = pairs.filter((p) => p !== shadowPair)
  const change: { rules?: FlatRule; shadow?: boolean } = {}
  if (shadowPair !== undefined) {
    const value = shadowPair.slice('shadow='.length)
    if (!['on', 'off', 'true', 'false'].includes(value)) throw new InvalidArgumentError('shadow', value, 'on or off')
    change.shadow = value === 'on' || value === 'true'
  }
  if (fields.length > 0 || shadowPair === undefined) {
    parseAssignments(fields) // the checks a change on one host gets: field=value, a number
    // Flat: the document keeps fields as `queueDelay.target`.
    change.rules = Object.fromEntries(
      fields.map((p) => [p.slice(0, p.indexOf('=')), Number(p.slice(p.indexOf('=') + 1))]),
    )
  }
  return change
}

/** `routing.<router> '<json>'`: the router's rules, checked as a document checks them (null: remove the router). */
function routingChange(router: string, pairs: readonly string[]): RouteRule[] | undefined {
  const text = pairs.join(' ')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new InvalidArgumentError(`routing.${router}`, text, 'the rules as JSON: [{"when": "...", "group": "..."}]')
  }
  return value === null ? undefined : checkRouter(router, { rules: value }).rules
}

function describe(doc: RuleDocument, what: string, description: string): string {
  const canary = doc.canary === undefined ? '' : ` (canary: ${JSON.stringify(doc.canary.target)})`
  return `${what}: version ${doc.version} written to ${description}${canary}\n`
}

/** `bulwark set --source ...`: resolves with the exit code. */
export async function setThroughSource(args: readonly string[], out: (text: string) => void): Promise<number> {
  const a = parseSourceArgs(args)
  const [target, ...pairs] = a.rest
  if (target === undefined) throw new InvalidArgumentError('component', target, 'a component or switches.<board>')
  const meta = { author: a.author, message: a.message }
  const { source } = sourceOf(a)
  try {
    if (target.startsWith('switches.')) {
      const board = target.slice('switches.'.length)
      const { changes, clearAll } = parseSwitchPairs(pairs)
      if (!clearAll && Object.keys(changes).length === 0)
        throw new InvalidArgumentError('switches', '', 'at least one target=mode')
      const doc = await editDocument(source, (d, m) => setSwitches(d, board, changes, clearAll, m, a.canary), meta)
      out(describe(doc, target, source.description))
      return 0
    }
    if (target.startsWith('routing.')) {
      const router = target.slice('routing.'.length)
      const rules = routingChange(router, pairs)
      const doc = await editDocument(source, (d, m) => setRouting(d, router, rules, m, a.canary), meta)
      out(describe(doc, `${target} ${rules === undefined ? 'removed' : `${rules.length} rules`}`, source.description))
      return 0
    }
    if (splitComponent(target) === undefined) checkComponent(target, {}) // throws, naming the forms
    const change = componentChange(pairs)
    checkComponent(target, change) // every field checked before anything is written
    const doc = await editDocument(source, (d, m) => setComponent(d, target, change, m, a.canary), meta)
    const fields = Object.entries(change.rules ?? {}).map(([f, v]) => `${f}=${v}`)
    if (change.shadow !== undefined) fields.push(`shadow=${change.shadow ? 'on' : 'off'}`)
    out(describe(doc, `${target} ${fields.join(' ')}`, source.description))
    return 0
  } finally {
    await source.close()
  }
}
