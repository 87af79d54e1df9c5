import { fileURLToPath } from 'url'

import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { EtcdRuleSource } from './etcd-rule-source'
import { FileRuleSource } from './file-rule-source'
import { RedisRuleSource } from './redis-rule-source'
import type { RuleSource } from './rule-source'

export const SOURCE_URL_FORMS =
  'redis://[user:password@]host:port[/db], rediss://..., redis+cluster://host:port[,host:port...], ' +
  'etcd://host:2379[,host:2379...], etcds://..., or file:///absolute/path.json (each may end with ?namespace=<ns>)'

/** A source URL's parts: where, and the query's `namespace` and `prefix`. */
export function splitSourceUrl(url: string): { scheme: string; rest: string; namespace?: string; prefix?: string } {
  const match = /^([a-z+]+):\/\/([^?#]*)(?:\?([^#]*))?$/.exec(url)
  if (match === null) throw new InvalidArgumentError('source', url, SOURCE_URL_FORMS)
  const query = new URLSearchParams(match[3] ?? '')
  for (const key of query.keys())
    if (key !== 'namespace' && key !== 'prefix')
      throw new InvalidArgumentError('source', url, `${SOURCE_URL_FORMS}; query: namespace, prefix`)
  return {
    scheme: match[1],
    rest: match[2],
    namespace: query.get('namespace') ?? undefined,
    prefix: query.get('prefix') ?? undefined,
  }
}

/** host:port[,host:port...] */
function endpoints(url: string, rest: string): Array<{ host: string; port: number }> {
  const list = rest.replace(/\/$/, '').split(',')
  return list.map((entry) => {
    const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(entry)
    if (m === null) throw new InvalidArgumentError('source', url, SOURCE_URL_FORMS)
    return { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) }
  })
}

/** file:///absolute/path: the path; a URL Node cannot turn into one (file://host/...) is the caller's error. */
function filePath(url: string, base: string): string {
  try {
    return fileURLToPath(base)
  } catch {
    throw new InvalidArgumentError('source', url, SOURCE_URL_FORMS)
  }
}

/**
 * Opens the rule source a URL names (BULWARK_RULES, `--source`), for `namespace` unless the URL names one.
 * Returns the source and the namespace it serves.
 */
export function openRuleSource(url: string, namespace: string | undefined): { source: RuleSource; namespace: string } {
  if (typeof url !== 'string') throw new InvalidArgumentError('source', url, SOURCE_URL_FORMS)
  const parts = splitSourceUrl(url)
  const ns = parts.namespace ?? namespace
  if (ns === undefined)
    throw new InvalidArgumentError(
      'namespace',
      ns,
      'a namespace: ?namespace=<ns> in the URL, --namespace, or BULWARK_NAMESPACE',
    )
  const base = url.split('?')[0]
  switch (parts.scheme) {
    case 'redis':
    case 'rediss':
      return { source: new RedisRuleSource({ url: base, namespace: ns, keyPrefix: parts.prefix }), namespace: ns }
    case 'redis+cluster':
      return {
        source: new RedisRuleSource({ cluster: endpoints(url, parts.rest), namespace: ns, keyPrefix: parts.prefix }),
        namespace: ns,
      }
    case 'etcd':
    case 'etcds': {
      const scheme = parts.scheme === 'etcd' ? 'http' : 'https'
      const hosts = endpoints(url, parts.rest).map(
        (e) => `${scheme}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`,
      )
      return { source: new EtcdRuleSource({ hosts, namespace: ns, keyPrefix: parts.prefix }), namespace: ns }
    }
    case 'file':
      return { source: new FileRuleSource({ path: filePath(url, base) }), namespace: ns }
    default:
      throw new InvalidArgumentError('source', url, SOURCE_URL_FORMS)
  }
}
