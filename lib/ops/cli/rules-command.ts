import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { inspectRegion } from '../top/inspect'
import type { RulesWatcherView } from '../top/views'
import { abort, promote, rollback } from '../fleet/document-changes'
import type { ChangeRecord, RuleDocument } from '../fleet/rule-document'
import { editDocument, parseSourceArgs, readDocument, sourceOf } from '../fleet/source-edit'

export const RULES_USAGE = `Usage: bulwark rules status [--source <url>] [--namespace <ns>] [--json]
       bulwark rules history --source <url> [--namespace <ns>] [--limit <n>] [--json]
       bulwark rules rollback --source <url> [--namespace <ns>] [-m <message>] <version>
       bulwark rules promote|abort --source <url> [--namespace <ns>] [-m <message>]

The fleet's rule source (docs/guide/fleet.md):
  status    without --source: this host's watcher (which process, the version obeyed, how stale, what it refused);
            with --source: the version there, the canary under way, and every host that reports
  history   the newest changes: version, time, author, what changed
  rollback  back to the rules and switches of <version>, as a new version
  promote   the canary's changes to every host; abort drops them`

const text = (value: unknown) => (value === undefined ? '-' : JSON.stringify(value))

function changeLines(record: ChangeRecord): string {
  const head = `${record.version}  ${record.time}  ${record.author}  ${record.action}${record.message ? `: ${record.message}` : ''}`
  const steps = record.changes.slice(0, 20).map((c) => `    ${c.path.join(' ')}: ${text(c.before)} -> ${text(c.after)}`)
  if (record.changes.length > 20) steps.push(`    ... ${record.changes.length - 20} more`)
  return [head, ...steps].join('\n')
}

/** This host's watchers (`bulwark rules status` without a source): one per namespace that follows one. */
function localStatus(namespace: string | undefined): Array<{ namespace: string; view: RulesWatcherView }> {
  const found: Array<{ namespace: string; view: RulesWatcherView }> = []
  for (const region of listRegions(namespace === undefined ? undefined : { namespace })) {
    const parts = splitRegionName(region)
    if (parts.kind !== 'fleet') continue
    const view = inspectRegion(region, 0)?.view
    if (view?.type === 'rules-watcher') found.push({ namespace: parts.namespace, view })
  }
  return found
}

function localLines(entry: { namespace: string; view: RulesWatcherView }): string {
  const v = entry.view
  const stale = v.staleMs === Infinity ? 'never heard' : `heard ${(v.staleMs / 1000).toFixed(1)} s ago`
  const lines = [
    `${entry.namespace}: version ${v.version}${v.canary ? ' (canary)' : ''}${v.fromDisk ? ' (last good, from disk)' : ''} from ${v.source || '(no watcher yet)'}`,
    `  watcher: ${v.watcher === undefined ? 'none' : `pid ${v.watcher.pid} thread ${v.watcher.threadId}`}, ${v.followers} following`,
    `  source: ${v.sourceUp ? 'up' : `down${v.lastError ? ` (${v.lastError})` : ''}`}, ${stale}`,
    `  refused: ${v.refused}`,
    ...v.refusals.map((r) => `    version ${r.version}${r.component ? ` ${r.component}` : ''}: ${r.reason}`),
  ]
  return lines.join('\n')
}

interface HostReport {
  host: string
  version: number
  canary: boolean
  confirmedAt: number
  refused: number
  watcher?: { pid: number }
}

function sourceLines(doc: RuleDocument, description: string, hosts: HostReport[] | undefined): string {
  const last = doc.history[doc.history.length - 1]
  const lines = [
    `source: ${description}`,
    `version ${doc.version}${last ? ` by ${last.author} at ${last.time} (${last.action})` : ''}`,
    `canary: ${doc.canary === undefined ? 'none' : `since version ${doc.canary.version}, ${JSON.stringify(doc.canary.target)}`}`,
  ]
  if (hosts === undefined) lines.push('hosts: this source keeps no reports (a file)')
  else {
    const current = hosts.filter((h) => h.version === doc.version).length
    lines.push(`hosts: ${hosts.length} reporting, ${current} on version ${doc.version}`)
    for (const h of hosts.sort((a, b) => (a.host < b.host ? -1 : 1)))
      lines.push(
        `  ${h.host}  version ${h.version}${h.canary ? ' (canary)' : ''}  ${h.confirmedAt > 0 ? `heard the source ${((Date.now() - h.confirmedAt) / 1000).toFixed(1)} s ago` : 'never heard the source'}  refused ${h.refused}`,
      )
  }
  return lines.join('\n')
}

/** `bulwark rules ...`: resolves with the exit code. */
export async function runRules(args: readonly string[], out: (text: string) => void): Promise<number> {
  const [command, ...rest] = args
  if (command === 'status' && !rest.includes('--source')) {
    const ns = rest.indexOf('--namespace')
    const found = localStatus(ns >= 0 ? rest[ns + 1] : undefined)
    if (rest.includes('--json')) out(`${JSON.stringify(found)}\n`)
    else
      out(
        found.length === 0
          ? 'No process of this host follows a rule source.\n'
          : `${found.map(localLines).join('\n')}\n`,
      )
    return 0
  }
  if (!['status', 'history', 'rollback', 'promote', 'abort'].includes(command ?? ''))
    throw new InvalidArgumentError('command', command, 'status, history, rollback, promote or abort')
  const a = parseSourceArgs(rest)
  const { source } = sourceOf(a)
  const meta = { author: a.author, message: a.message }
  try {
    if (command === 'status') {
      const { doc } = await readDocument(source)
      const hosts =
        source.reports === undefined ? undefined : (await source.reports()).map((r) => JSON.parse(r) as HostReport)
      out(
        a.json
          ? `${JSON.stringify({ source: source.description, document: doc, hosts })}\n`
          : `${sourceLines(doc, source.description, hosts)}\n`,
      )
    } else if (command === 'history') {
      const { doc } = await readDocument(source)
      const records = doc.history.slice(-a.limit).reverse()
      out(
        a.json
          ? `${JSON.stringify(records)}\n`
          : records.length === 0
            ? 'No change yet.\n'
            : `${records.map(changeLines).join('\n')}\n`,
      )
    } else {
      const version = command === 'rollback' ? Number(a.rest[0]) : undefined
      if (command === 'rollback' && !Number.isSafeInteger(version))
        throw new InvalidArgumentError('version', a.rest[0], 'the version to go back to')
      const doc = await editDocument(
        source,
        (d, m) =>
          command === 'promote' ? promote(d, m) : command === 'abort' ? abort(d, m) : rollback(d, version as number, m),
        meta,
      )
      out(`${command}: version ${doc.version} written to ${source.description}\n`)
    }
    return 0
  } finally {
    await source.close()
  }
}
