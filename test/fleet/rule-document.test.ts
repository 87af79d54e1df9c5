import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { abort, promote, rollback, setComponent, setSwitches } from '../../lib/ops/fleet/document-changes'
import { entryFor, hostPosition, hostRules, inCanary } from '../../lib/ops/fleet/host-rules'
import { emptyDocument, LIMITS, parseRuleDocument, type RuleDocument } from '../../lib/ops/fleet/rule-document'

const alice = { author: 'alice', time: '2026-01-01T00:00:00.000Z' }
const text = (value: unknown) => JSON.stringify(value)

describe('parseRuleDocument: a document is checked whole before any host obeys it', () => {
  const valid = {
    format: 1,
    version: 3,
    components: {
      'bbr.api': { rules: { cpuThreshold: 700, 'queueDelay.target': 5 }, shadow: true },
      'token-bucket.clients.*': { rules: { rate: 50 } },
      'circuit.pay': { rules: { slowCallRatio: 0.5, slowCallDuration: 200 } },
      'redis-rate-limiter.api': { rules: { limit: 100, window: 1000 } },
    },
    switches: { api: { 'priority:low': 'shed', 'breaker:payments': 'open' } },
  }

  it('takes every kind of rule, switch and the shadow flag', () => {
    const doc = parseRuleDocument(text(valid))
    expect(doc.components['bbr.api']).toEqual({ rules: { cpuThreshold: 700, 'queueDelay.target': 5 }, shadow: true })
    expect(doc.switches.api['priority:low']).toBe('shed')
    expect(doc.history).toEqual([])
  })

  it.each([
    [
      { ...valid, components: { 'bbr.api': { rules: { cpuThreshold: 2000 } } } },
      /components\.bbr\.api\.rules\.cpuThreshold/,
    ],
    [{ ...valid, components: { 'bbr.api': { rules: { window: 10 } } } }, /a field of bbr/],
    [{ ...valid, components: { 'bbr.api': { rules: { cpuThreshold: '700' } } } }, /a finite number/],
    [{ ...valid, components: { 'nope.api': {} } }, /`component`/],
    [{ ...valid, components: { 'bbr.api': { shadow: 'yes' } } }, /shadow` must be a boolean/],
    [{ ...valid, components: { 'bbr.api': { enforce: false } } }, /enforce` must be absent/],
    [{ ...valid, components: { 'circuit.pay': { rules: { failureRatio: 0.5, failureCount: 3 } } } }, /failureRatio/],
    [{ ...valid, switches: { api: { 'priority:urgent': 'shed' } } }, /priority:critical\|high\|normal\|low/],
    [{ ...valid, switches: { api: { 'breaker:pay': 'shed' } } }, /`mode`/],
    [{ ...valid, switches: { __proto__x: {}, ['__proto__']: { 'route:/a': 'shed' } } }, /board name/],
    [{ ...valid, format: 2 }, /`format`/],
    [{ ...valid, routes: {} }, /`routes` must be absent \(a section of a later document format\?\)/],
    [{ ...valid, version: -1 }, /`version`/],
    [{ ...valid, canary: { version: 1, target: { share: 2 }, components: {} } }, /canary\.target\.share/],
    [{ ...valid, canary: { version: 1, target: {} } }, /a share, labels or both/],
  ])('refuses %#, naming the bad field', (value, message) => {
    expect(() => parseRuleDocument(JSON.stringify(value))).toThrow(InvalidArgumentError)
    expect(() => parseRuleDocument(JSON.stringify(value))).toThrow(message)
  })

  it('refuses what is not JSON, or larger than a document may be', () => {
    expect(() => parseRuleDocument('{"format":1,')).toThrow(/JSON/)
    const huge = text({ ...valid, pad: 'x'.repeat(LIMITS.documentBytes) })
    expect(() => parseRuleDocument(huge)).toThrow(/at most 1048576 bytes/)
    const many = Object.fromEntries(Array.from({ length: LIMITS.components + 1 }, (_, i) => [`bbr.c${i}`, {}]))
    expect(() => parseRuleDocument(text({ ...valid, components: many }))).toThrow(/at most 1000 entries/)
  })
})

describe('changes: versions, authors, history and rollback', () => {
  it('each change is the next version, with its author, time and steps', () => {
    let doc = setComponent(emptyDocument(), 'bbr.api', { rules: { cpuThreshold: 700 } }, alice)
    doc = setComponent(
      doc,
      'bbr.api',
      { rules: { cpuThreshold: 650 }, shadow: true },
      { author: 'bob', message: 'calmer' },
    )
    doc = setSwitches(doc, 'api', { 'priority:low': 'shed' }, false, alice)
    expect(doc.version).toBe(3)
    expect(doc.components['bbr.api']).toEqual({ rules: { cpuThreshold: 650 }, shadow: true })
    expect(doc.history.map((r) => [r.version, r.author, r.action])).toEqual([
      [1, 'alice', 'set'],
      [2, 'bob', 'set'],
      [3, 'alice', 'set'],
    ])
    expect(doc.history[1]).toMatchObject({
      message: 'calmer',
      changes: [
        { path: ['components', 'bbr.api', 'rules', 'cpuThreshold'], before: 700, after: 650 },
        { path: ['components', 'bbr.api', 'shadow'], after: true },
      ],
    })
  })

  it('rollback returns rules, switches and canary to a version, as a new version; and can itself be rolled back', () => {
    const v1 = setComponent(emptyDocument(), 'bbr.api', { rules: { cpuThreshold: 700 } }, alice)
    const v2 = setComponent(v1, 'token-bucket.gw', { rules: { rate: 10 } }, alice)
    const v3 = setSwitches(v2, 'api', { 'route:/a': 'fallback' }, false, alice)
    const v4 = setComponent(v3, 'bbr.api', { rules: { cpuThreshold: 500 } }, alice, { share: 0.1 })
    const back = rollback(v4, 1, { author: 'carol' })
    expect(back.version).toBe(5)
    expect(back.components).toEqual(v1.components)
    expect(back.switches).toEqual({})
    expect(back.canary).toBeUndefined()
    expect(back.history[back.history.length - 1]).toMatchObject({
      action: 'rollback',
      author: 'carol',
      message: 'rollback to version 1',
    })
    const forth = rollback(back, 4, alice)
    expect({ c: forth.components, s: forth.switches, k: forth.canary }).toEqual({
      c: v4.components,
      s: v4.switches,
      k: v4.canary,
    })
    expect(forth.version).toBe(6)
    expect(() => rollback(forth, 5, alice)).not.toThrow()
    expect(() => rollback(forth, 6, alice)).toThrow(/an earlier version than 6/)
  })

  it('rollback needs the history to reach the version', () => {
    let doc: RuleDocument = emptyDocument()
    for (let i = 0; i < LIMITS.history + 5; i++)
      doc = setComponent(doc, 'token-bucket.gw', { rules: { rate: i + 1 } }, alice)
    expect(doc.history.length).toBe(LIMITS.history)
    expect(() => rollback(doc, 2, alice)).toThrow(/a version the history still holds \(5 or later\)/)
    expect(rollback(doc, 5, alice).components['token-bucket.gw'].rules?.rate).toBe(5)
  })
})

describe('canaries: a share of hosts, or hosts with labels, first; then all', () => {
  const hosts = Array.from({ length: 1000 }, (_, i) => ({
    host: `pod-${i}`,
    labels: { zone: i % 2 === 0 ? 'a' : 'b' },
  }))

  it('a share reaches about that share of hosts, the same ones on every host', () => {
    const doc = setComponent(emptyDocument(), 'bbr.api', { rules: { cpuThreshold: 600 } }, alice, { share: 0.1 })
    const picked = hosts.filter((h) => inCanary(doc.canary!, h))
    expect(picked.length).toBeGreaterThan(60)
    expect(picked.length).toBeLessThan(140)
    expect(hosts.filter((h) => inCanary(doc.canary!, h))).toEqual(picked) // deterministic
    expect(hostPosition('pod-1', 1)).not.toBe(hostPosition('pod-1', 2)) // each canary picks afresh
    const inside = hostRules(doc, picked[0])
    const outside = hostRules(
      doc,
      hosts.find((h) => !picked.includes(h))!,
    )
    expect(inside).toMatchObject({ canary: true, components: { 'bbr.api': { rules: { cpuThreshold: 600 } } } })
    expect(outside).toEqual({ version: 1, canary: false, components: {}, switches: {} })
  })

  it('labels pick the hosts that carry them; the canary overlays switches, a null clearing one', () => {
    let doc = setSwitches(emptyDocument(), 'api', { 'priority:low': 'shed', 'route:/a': 'fallback' }, false, alice)
    doc = setSwitches(doc, 'api', { 'priority:low': null, 'priority:normal': 'shed' }, false, alice, {
      labels: { zone: 'a' },
    })
    expect(hostRules(doc, hosts[0]).switches.api).toEqual({ 'route:/a': 'fallback', 'priority:normal': 'shed' })
    expect(hostRules(doc, hosts[1]).switches.api).toEqual({ 'priority:low': 'shed', 'route:/a': 'fallback' })
    expect(() => setComponent(doc, 'bbr.api', {}, alice, { share: 0.5 })).toThrow(/promote or abort it first/)
    const promoted = promote(doc, alice)
    expect(promoted.canary).toBeUndefined()
    expect(promoted.switches.api).toEqual({ 'route:/a': 'fallback', 'priority:normal': 'shed' })
    const aborted = abort(doc, alice)
    expect(hostRules(aborted, hosts[0]).switches.api).toEqual({ 'priority:low': 'shed', 'route:/a': 'fallback' })
  })

  it('a keyed collection is named with `.*`; an exact name comes first, then the longest prefix', () => {
    const doc = setComponent(
      setComponent(
        setComponent(emptyDocument(), 'token-bucket.clients.*', { rules: { rate: 5 } }, alice),
        'token-bucket.clients.vip.*',
        { rules: { rate: 50 } },
        alice,
      ),
      'token-bucket.clients.vip.acme',
      { rules: { rate: 500 } },
      alice,
    )
    const rules = hostRules(doc, hosts[0])
    expect(entryFor(rules, 'token-bucket', 'clients.bob.x1')?.rules?.rate).toBe(5)
    expect(entryFor(rules, 'token-bucket', 'clients.vip.zed')?.rules?.rate).toBe(50)
    expect(entryFor(rules, 'token-bucket', 'clients.vip.acme')?.rules?.rate).toBe(500)
    expect(entryFor(rules, 'token-bucket', 'clientsx.bob')).toBeUndefined()
    expect(entryFor(rules, 'sliding-window', 'clients.bob')).toBeUndefined()
  })
})
