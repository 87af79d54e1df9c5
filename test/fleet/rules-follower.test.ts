// The host side of a fleet's rules, in one process (the watcher, the election and the hooks; the processes of a
// real host are in fleet-host.test.ts), driven by a source in memory.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'

import { CircuitBreaker, Switchboard, TokenBucket } from '../../lib/index'
import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { setComponent, setSwitches } from '../../lib/ops/fleet/document-changes'
import { emptyDocument, type RuleDocument } from '../../lib/ops/fleet/rule-document'
import { followRules, type RulesFollower } from '../../lib/ops/fleet/rules-follower'
import { inspectRegions } from '../../lib/ops/top/inspect'
import { renderFrame } from '../../lib/ops/top/render-text'
import { ManualClock } from '../helpers/manual-clock'
import { MemoryRuleSource } from '../helpers/memory-rule-source'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import '../helpers/cleanup-regions'

const alice = { author: 'alice' }
const closing: Array<{ close(): void }> = []
const dirs: string[] = []
afterEach(() => {
  closing
    .splice(0)
    .reverse()
    .forEach((c) => c.close())
  dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true }))
})

function keep<T extends { close(): void }>(thing: T): T {
  closing.push(thing)
  return thing
}

function namespace(): string {
  return uniqueName('fl')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-40)
}

function follow(source: MemoryRuleSource, ns: string, extra: object = {}): { follower: RulesFollower; log: string[] } {
  const log: string[] = []
  const follower = keep(
    followRules({ rules: source, namespace: ns, cacheDir: false, log: (l) => log.push(l), ...extra }),
  )
  return { follower, log }
}

describe('RulesFollower: a host obeys its source', () => {
  it('applies rules and switches to the regions the host has, and to those made later, at once', async () => {
    const ns = namespace()
    const source = new MemoryRuleSource()
    const bucket = keep(new TokenBucket({ rate: 10, shared: 'gw', namespace: ns }))
    const board = keep(new Switchboard({ shared: 'api', namespace: ns }))
    const { follower, log } = follow(source, ns)
    expect(follower.watching).toBe(true)
    let doc = setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: 500 } }, alice)
    doc = setSwitches(doc, 'api', { 'priority:low': 'shed' }, false, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => bucket.rate === 500, { what: 'the new rate' })
    expect(board.list().map((s) => `${s.target}=${s.mode}`)).toEqual(['priority:low=shed'])
    expect(log.some((l) => /obeys version 2 \(set by alice\)/.test(l))).toBe(true)
    expect(follower.stats()).toMatchObject({ version: 2, sourceUp: true, refused: 0, watching: true, fromDisk: false })
    // The exporters report it with no code: nobody's code made it.
    const registry = new Registry()
    const metrics = keep(new PrometheusMetrics({ registry }))
    const scraped = await registry.metrics()
    expect(scraped).toContain(`bulwark_rules_version{name="${ns}"} 2`)
    expect(scraped).toContain(`bulwark_rules_source_up{name="${ns}"} 1`)
    expect(scraped).toContain(`bulwark_rules_refused_total{name="${ns}"} 0`)
    expect(metrics).toBeDefined()

    // Made after: takes the rule in force with its region, before any call.
    const later = keep(new TokenBucket({ rate: 10, shared: 'gw2', namespace: ns }))
    source.put(JSON.stringify(setComponent(doc, 'token-bucket.gw2', { rules: { rate: 77 } }, alice)))
    await waitFor(() => later.rate === 77, { what: 'the rule of the later bucket' })
    const fresh = keep(new TokenBucket({ rate: 10, shared: 'gw3', namespace: ns }))
    source.put(
      JSON.stringify(
        setComponent(JSON.parse(source.text!) as RuleDocument, 'token-bucket.gw3.*', { rules: { rate: 5 } }, alice),
      ),
    )
    await waitFor(() => follower.stats().version === 4)
    const key = keep(new TokenBucket({ rate: 10, shared: 'gw3.alice', namespace: ns }))
    expect(key.rate).toBe(5) // a keyed collection's key, made after the change: at once
    expect(fresh.rate).toBe(10) // `gw3.*` names the keys, not gw3 itself
    const newBoard = keep(new Switchboard({ shared: 'api', namespace: `${ns}x`.slice(-40) }))
    expect(newBoard.list()).toEqual([]) // another application's board: not this source's
    // A switch dropped from the source is cleared on the host.
    source.put(
      JSON.stringify(
        setSwitches(JSON.parse(source.text!) as RuleDocument, 'api', { 'priority:low': null }, false, alice),
      ),
    )
    await waitFor(() => board.list().length === 0, { what: 'the switch cleared' })
  })

  it('never applies a document that fails its checks, nor a rule a region refuses: it keeps the last good ones', async () => {
    const ns = namespace()
    const source = new MemoryRuleSource()
    const bucket = keep(new TokenBucket({ rate: 10, shared: 'gw', namespace: ns }))
    const breaker = keep(new CircuitBreaker({ shared: 'pay', namespace: ns, strategy: 'errorCount', failureCount: 5 }))
    const { follower, log } = follow(source, ns)
    const good = setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: 300 } }, alice)
    source.put(JSON.stringify(good))
    await waitFor(() => bucket.rate === 300)
    // Written around the checks (someone with redis-cli): a negative rate.
    source.put(JSON.stringify({ ...good, version: 2, components: { 'token-bucket.gw': { rules: { rate: -5 } } } }))
    await waitFor(() => follower.stats().refused === 1, { what: 'the refusal' })
    expect(bucket.rate).toBe(300)
    expect(follower.stats().version).toBe(1)
    expect(
      log.some((l) => /refused the document from memory: argument `components\.token-bucket\.gw\.rules\.rate`/.test(l)),
    ).toBe(true)
    source.put('{"format":1,"version":3,')
    await waitFor(() => follower.stats().refused === 2)
    // Valid as a document, refused by the breaker of this host (its strategy counts failures, not a ratio).
    source.put(JSON.stringify(setComponent(good, 'circuit.pay', { rules: { failureRatio: 0.2 } }, alice)))
    await waitFor(() => follower.stats().refused === 3)
    expect(follower.stats().version).toBe(2)
    const frame = renderFrame({
      time: new Date().toISOString(),
      interval: 0,
      regions: inspectRegions({ names: [`${ns}/rules`] }),
    })
    expect(frame).toMatch(/RULES SOURCE/)
    expect(frame).toMatch(/refused.*\n.*3: .*failureRatio/s)
    expect(breaker.stats().rules.version).toBe(0)
  })

  it('without its source, keeps its rules and says how stale they are; back, catches up', async () => {
    const ns = namespace()
    const source = new MemoryRuleSource()
    const wall = new ManualClock(Date.parse('2026-01-01T00:00:00Z'))
    const bucket = keep(new TokenBucket({ rate: 10, shared: 'gw', namespace: ns }))
    const { follower, log } = follow(source, ns, { wallClock: wall.now, checkInterval: 10 })
    let doc = setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: 40 } }, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => bucket.rate === 40)
    source.setDown(true)
    wall.advance(60_000)
    await waitFor(() => !follower.stats().sourceUp, { what: 'the source seen down' })
    expect(follower.stats().staleMs).toBeGreaterThanOrEqual(60_000)
    expect(bucket.rate).toBe(40)
    expect(log.some((l) => /memory does not answer \(the source does not answer\): keeps version 1/.test(l))).toBe(true)
    doc = setComponent(doc, 'token-bucket.gw', { rules: { rate: 41 } }, alice)
    source.text = JSON.stringify(doc) // changed while the host could not hear
    source.revision++
    source.setDown(false)
    await waitFor(() => bucket.rate === 41, { what: 'the change made during the outage' })
    expect(follower.stats()).toMatchObject({ sourceUp: true, staleMs: 0 })
  })

  it('a host restarted while its source is down starts with the last good rules from disk', async () => {
    const ns = namespace()
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-lastgood-'))
    dirs.push(cacheDir)
    const source = new MemoryRuleSource()
    const first = keep(followRules({ rules: source, namespace: ns, cacheDir, log: () => undefined }))
    source.put(JSON.stringify(setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: 123 } }, alice)))
    await waitFor(() => fs.existsSync(path.join(cacheDir, `${ns}.json`)), { what: 'the document kept on disk' })
    expect(fs.statSync(path.join(cacheDir, `${ns}.json`)).mode & 0o777).toBe(0o600)
    first.close() // the host goes away: its regions with it

    source.setDown(true)
    const log: string[] = []
    const again = keep(followRules({ rules: source, namespace: ns, cacheDir, log: (l) => log.push(l) }))
    const bucket = keep(new TokenBucket({ rate: 10, shared: 'gw', namespace: ns }))
    expect(bucket.rate).toBe(123)
    expect(again.stats()).toMatchObject({ version: 1, fromDisk: true, sourceUp: false })
    expect(log[0]).toMatch(/obeys version 1 \(set by alice\) from .*\.json \(saved .*\) until the source answers/)

    // Another user's file, or one others may write, is never read.
    fs.chmodSync(path.join(cacheDir, `${ns}.json`), 0o666)
    again.close()
    const third = keep(followRules({ rules: source, namespace: ns, cacheDir, log: () => undefined }))
    expect(third.stats().version).toBe(0)
  })

  it('a canary reaches the hosts it targets only', async () => {
    const source = new MemoryRuleSource()
    const doc = setComponent(
      setComponent(emptyDocument(), 'token-bucket.gw', { rules: { rate: 100 } }, alice),
      'token-bucket.gw',
      { rules: { rate: 200 } },
      alice,
      { labels: { zone: 'a' } },
    )
    source.put(JSON.stringify(doc))
    const [a, b] = [namespace(), namespace()]
    const inA = keep(new TokenBucket({ rate: 1, shared: 'gw', namespace: a }))
    const inB = keep(new TokenBucket({ rate: 1, shared: 'gw', namespace: b }))
    follow(source, a, { labels: { zone: 'a' } })
    follow(source, b, { labels: { zone: 'b' } })
    await waitFor(() => inA.rate === 200 && inB.rate === 100, { what: 'the canary and the base' })
    expect([inA.rate, inB.rate]).toEqual([200, 100])
  })
})
