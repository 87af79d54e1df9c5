// What followRules and a source URL accept (lib/ops/fleet/follower-options.ts, open-source.ts): every bad option or
// URL is a typed error naming the field and the value, before anything is opened.
import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'
import { resolveFollowOptions, parseLabels } from '../../lib/ops/fleet/follower-options'
import { openRuleSource, splitSourceUrl } from '../../lib/ops/fleet/open-source'

const url = 'file:///etc/bulwark/rules.json'

describe('followRules options', () => {
  it('resolves the defaults, and the namespace from the URL', () => {
    const o = resolveFollowOptions({ rules: `${url}?namespace=shop`, host: 'pod-1', labels: { zone: 'a' } })
    expect(o).toMatchObject({ url: `${url}?namespace=shop`, namespace: 'shop', host: 'pod-1', labels: { zone: 'a' } })
    expect(o).toMatchObject({ checkInterval: 1000, staleAfter: 3000, maxMembers: 256 })
    expect(resolveFollowOptions({ rules: url, namespace: 'api', cacheDir: false }).cacheDir).toBeUndefined()
    expect(parseLabels('zone=a, track=stable,,')).toEqual({ zone: 'a', track: 'stable' })
  })

  it.each([
    [{}, 'rules'],
    [{ rules: 42 }, 'rules'],
    [{ rules: {} }, 'rules'],
    [{ rules: url, namespace: 'a b' }, 'namespace'],
    [{ rules: url, host: 'pod 1' }, 'host'],
    [{ rules: url, host: '' }, 'host'],
    [{ rules: url, cacheDir: 7 }, 'cacheDir'],
    [{ rules: url, log: 'stderr' }, 'log'],
    [{ rules: url, checkInterval: 0 }, 'checkInterval'],
    [{ rules: url, staleAfter: Infinity }, 'staleAfter'],
    [{ rules: url, maxMembers: 1.5 }, 'maxMembers'],
    [{ rules: url, now: 5 }, 'now'],
  ])('refuses %o, naming %s', (options, field) => {
    expect(() => resolveFollowOptions(options)).toThrow(InvalidOptionError)
    expect(() => resolveFollowOptions(options)).toThrow(new RegExp(`\`${field}\``))
  })

  it('refuses labels a canary could not match', () => {
    expect(() => resolveFollowOptions({ rules: url, labels: { 'zone a': 'x' } })).toThrow(/labels/)
  })
})

describe('source URLs', () => {
  it('splits the scheme, the place, the namespace and the key prefix', () => {
    expect(splitSourceUrl('etcd://e1:2379,e2:2379?namespace=shop&prefix=/x')).toEqual({
      scheme: 'etcd',
      rest: 'e1:2379,e2:2379',
      namespace: 'shop',
      prefix: '/x',
    })
  })

  it.each([
    'redis:/one-slash',
    'localhost:6379',
    'redis://h:6379?db=2',
    'gopher://rules.example/',
    'redis+cluster://h',
    'redis+cluster://h:6379,:7000',
    'etcd://h:port',
    'file://relative/rules.json',
  ])('refuses %s, naming the source', (bad) => {
    expect(() => openRuleSource(bad, 'shop')).toThrow(InvalidArgumentError)
    expect(() => openRuleSource(bad, 'shop')).toThrow(/`source`|`namespace`/)
  })

  it('needs a namespace, from the URL or given', () => {
    expect(() => openRuleSource(url, undefined)).toThrow(/`namespace`/)
    expect(() => openRuleSource(42 as unknown as string, 'shop')).toThrow(/`source`/)
  })
})
