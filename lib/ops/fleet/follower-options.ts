import * as os from 'os'

import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkNamespace, defaultNamespace } from '../../foundation/regions/namespace'
import type { Clock } from '../../foundation/signals/clock'
import { checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import { checkTarget } from './rule-document'
import type { RuleSource } from './rule-source'
import { splitSourceUrl } from './open-source'
import { defaultCacheDir } from './last-good'

/** The environment variables a host is told who it is by (canaries). */
export const HOST_ENV = 'BULWARK_HOST'
export const LABELS_ENV = 'BULWARK_HOST_LABELS'

export interface FollowRulesOptions {
  /** The rule source: a URL as BULWARK_RULES takes it (`redis://...`, `etcd://...`, `file:///...`), or one of yours. */
  rules: string | RuleSource
  /** The application whose rules to follow (default: the URL's `?namespace=`, else BULWARK_NAMESPACE or derived). */
  namespace?: string
  /** This host's id for canaries and reports (default: BULWARK_HOST, else the host name: a pod's name). */
  host?: string
  /** This host's labels for canaries (default: BULWARK_HOST_LABELS, `zone=a,tier=edge`). */
  labels?: Record<string, string>
  /** Where the watcher keeps the last good document (default: BULWARK_RULES_CACHE, else a private temporary directory); false: nowhere. */
  cacheDir?: string | false
  /** Ms between the watcher's reads of the source, besides its notifications (default 1000). */
  checkInterval?: number
  /** Ms after which a watcher whose event loop stopped is replaced (default 3000; a dead one is within 0.2-1 s). */
  staleAfter?: number
  /** Members the host's fleet region accepts: threads x processes that follow (default 256). */
  maxMembers?: number
  /** Where log lines go (default: standard error, prefixed `bulwark rules:`). */
  log?: (line: string) => void
  /** Host-wide monotonic clock for the election (tests). */
  now?: Clock
  /** Wall clock (tests). */
  wallClock?: () => number
}

export interface ResolvedFollowOptions {
  url: string | undefined
  source: RuleSource | undefined
  namespace: string
  host: string
  labels: Record<string, string>
  cacheDir: string | undefined
  checkInterval: number
  staleAfter: number
  maxMembers: number
  log: (line: string) => void
  now: Clock | undefined
  wallClock: () => number
}

/** `zone=a,tier=edge` as labels. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue
    const eq = pair.indexOf('=')
    labels[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim()
  }
  return labels
}

export function resolveFollowOptions(options: unknown): ResolvedFollowOptions {
  const o = checkOptions<FollowRulesOptions>(options, 'options')
  const rules = o.rules
  const isSource = rules !== null && typeof rules === 'object' && typeof (rules as RuleSource).watch === 'function'
  if (typeof rules !== 'string' && !isSource)
    throw new InvalidOptionError('rules', rules, 'a rule source URL or a RuleSource')
  const fromUrl = typeof rules === 'string' ? splitSourceUrl(rules).namespace : undefined
  const namespace =
    o.namespace !== undefined ? checkNamespace('namespace', o.namespace) : (fromUrl ?? defaultNamespace())
  const host = o.host ?? process.env[HOST_ENV] ?? os.hostname()
  if (typeof host !== 'string' || !/^[A-Za-z0-9._:-]{1,200}$/.test(host))
    throw new InvalidOptionError('host', host, 'a host id of 1-200 characters from A-Z a-z 0-9 . _ : -')
  const labels = o.labels ?? parseLabels(process.env[LABELS_ENV] ?? '')
  if (Object.keys(labels).length > 0) checkTarget({ labels }, 'labels')
  const cacheDir = o.cacheDir === false ? undefined : (o.cacheDir ?? defaultCacheDir())
  if (cacheDir !== undefined && typeof cacheDir !== 'string')
    throw new InvalidOptionError('cacheDir', o.cacheDir, 'a directory, or false')
  const log = optionalFunction<(line: string) => void>('log', o.log)
  return {
    url: typeof rules === 'string' ? rules : undefined,
    source: isSource ? (rules as RuleSource) : undefined,
    namespace,
    host,
    labels,
    cacheDir,
    checkInterval: optionalNumber('checkInterval', o.checkInterval, 1000, { min: 10, max: 3_600_000 }),
    staleAfter: optionalNumber('staleAfter', o.staleAfter, 3000, { min: 100, max: 3_600_000 }),
    maxMembers: optionalNumber('maxMembers', o.maxMembers, 256, { integer: true, min: 1, max: 4096 }),
    log: log ?? ((line) => process.stderr.write(`bulwark rules: ${line}\n`)),
    now: optionalFunction<Clock>('now', o.now),
    wallClock: optionalFunction<() => number>('wallClock', o.wallClock) ?? Date.now,
  }
}
