// Gray routing from a fleet's rule source (docs/readme/fleet.md, "Gray routing"): `bulwark set --source ...
// routing.<router>` reaches a router in another process through a file source; a rule the host's router cannot take
// is refused and the last good rules kept; a canary reaches its hosts only; a rollback brings the rules back.
import { type ChildProcess, fork } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { GrayRouter, type RouteRule } from '../../lib/index'
import { rollback, setRouting } from '../../lib/ops/fleet/document-changes'
import { emptyDocument, parseRuleDocument, type RuleDocument } from '../../lib/ops/fleet/rule-document'
import { hostRules } from '../../lib/ops/fleet/host-rules'
import { followRules } from '../../lib/ops/fleet/rules-follower'
import { bulwarkHere as bulwark } from '../helpers/cli-in-process'
import { MemoryRuleSource } from '../helpers/memory-rule-source'
import { RedisServer, redisTarget } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import '../helpers/cleanup-regions'

const member = path.join(__dirname, '..', 'fixtures', 'routing-member.cjs')
const alice = { author: 'alice' }
const v2Rule: RouteRule[] = [{ when: 'header(x-version) = v2', group: 'v2' }]
const v2Header = { headers: { 'x-version': 'v2' } }

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-routing-'))
const closing: Array<{ close(): void }> = []
const children: ChildProcess[] = []
afterEach(() => {
  closing
    .splice(0)
    .reverse()
    .forEach((c) => c.close())
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

function keep<T extends { close(): void }>(thing: T): T {
  closing.push(thing)
  return thing
}

function namespace(): string {
  return uniqueName('gr')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-40)
}

function router(ns: string, shared = 'checkout'): GrayRouter {
  return keep(new GrayRouter({ shared, namespace: ns, groups: ['stable', 'v2'], fallback: 'stable' }))
}

/**
 * A member process follows `url` (a source for namespace `ns`); `bulwark set --source` changes its router's rules,
 * a group it does not have is refused there, rollbacks bring the rules back and then unname the router.
 */
async function expectRoutedFromAnotherProcess(url: string, ns: string): Promise<void> {
  const cache = fs.mkdtempSync(path.join(dir, 'cache-'))
  const env = { ...process.env, BULWARK_RULES: url, BULWARK_NAMESPACE: ns, BULWARK_RULES_CACHE: cache }
  const reports: Array<{ v2: string; rules: RouteRule[]; version: number; refused: number }> = []
  const child = fork(member, [], { env, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  children.push(child)
  let log = '' // the follower's log lines
  child.stderr?.on('data', (d) => (log += d))
  child.on('message', (m) => reports.push(m as (typeof reports)[number]))
  const latest = () => reports[reports.length - 1]
  await waitFor(() => latest()?.v2 === 'stable', { what: 'the member routing' })

  const src = ['--source', url, '--namespace', ns, '--author', 'alice']
  const set = await bulwark('set', ...src, 'routing.checkout', JSON.stringify(v2Rule))
  expect(set).toMatchObject({ code: 0, out: expect.stringContaining('routing.checkout 1 rules: version 1 written') })
  await waitFor(() => latest()?.v2 === 'v2', { what: 'the rule obeyed in the other process' })

  // Checked before anything is written: the field named, exit code 2.
  const bad = await bulwark('set', ...src, 'routing.checkout', '[{"when": "weight = 300", "group": "v2"}]')
  expect(bad.code).toBe(2)
  expect(bad.err).toMatch(/routing\.checkout\.rules\[0\]\.when` must be weight = <an integer 0-100>/)
  // A group the host's router does not have: the document is valid, the host refuses it and keeps its rules.
  await bulwark('set', ...src, 'routing.checkout', '[{"when": "method = GET", "group": "v3"}]')
  await waitFor(() => latest()?.refused === 1 && latest()?.version === 2, { what: 'the refusal' })
  expect(log).toMatch(/refused routing\.checkout .*one of the router's groups \(stable, v2\)/)
  expect(latest()).toMatchObject({ v2: 'v2', rules: v2Rule })

  await bulwark('set', ...src, 'routing.checkout', '[{"when": "header(x-version) = v3", "group": "v2"}]')
  await waitFor(() => latest()?.v2 === 'stable', { what: 'the third rules obeyed' })
  expect((await bulwark('rules', 'rollback', ...src, '1')).out).toContain('version 4 written')
  await waitFor(() => latest()?.version === 4 && latest()?.v2 === 'v2', { what: 'the rollback to version 1' })
  expect(latest().rules).toEqual(v2Rule)
  const history = await bulwark('rules', 'history', ...src)
  expect(history.out).toContain('routing checkout rules')
  // Back to before the source named the router: it routes nothing any more, everything to its fallback.
  await bulwark('rules', 'rollback', ...src, '0')
  await waitFor(() => latest()?.version === 5 && latest()?.rules.length === 0, { what: 'the router unnamed' })
  expect(latest().v2).toBe('stable')
}

const redis = redisTarget(true)

describe.skipIf(!redis)('gray routing from Redis', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start(redis!.binary!)
  })
  afterAll(() => server?.stop())

  it('bulwark set --source routing.<router> reaches a router in another process; refusals; rollback', async () => {
    await expectRoutedFromAnotherProcess(server.url, namespace())
  })
})

describe('gray routing from a rule source', () => {
  it('bulwark set --source routing.<router> on a file reaches a router in another process; refusals; rollback', async () => {
    const ns = namespace()
    await expectRoutedFromAnotherProcess(`file://${path.join(dir, `${ns}.json`)}`, ns)
  })

  it('a host refuses what its routers cannot take, keeps the last good rules, and gives new routers the rules', async () => {
    const ns = namespace()
    const source = new MemoryRuleSource()
    const checkout = router(ns)
    const log: string[] = []
    const follower = keep(followRules({ rules: source, namespace: ns, cacheDir: false, log: (l) => log.push(l) }))
    let doc = setRouting(emptyDocument(), 'checkout', v2Rule, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => checkout.route(v2Header) === 'v2', { what: 'the rules obeyed' })

    doc = setRouting(doc, 'checkout', [{ when: 'method = GET', group: 'blue' }], alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => follower.stats().refused === 1, { what: 'the refusal' })
    expect(log.some((l) => /refused routing\.checkout .*rules\[0\]\.group.*one of the router's groups/.test(l))).toBe(
      true,
    )
    expect(checkout.rules).toEqual(v2Rule)
    // Written around the checks: the whole document is refused.
    source.put(
      JSON.stringify({ ...doc, version: 3, routing: { checkout: { rules: [{ when: 'weight=x', group: 'v2' }] } } }),
    )
    await waitFor(() => follower.stats().refused === 2, { what: 'the document refused' })
    expect(follower.stats().version).toBe(2)

    // A router made after the change takes the rules with its region, before its first request.
    doc = setRouting(doc, 'search', [{ when: 'path ^= /new/', group: 'v2' }], alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => follower.stats().version === 3)
    expect(router(ns, 'search').route({ url: '/new/x' })).toBe('v2')

    doc = rollback(doc, 1, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => follower.stats().version === 4)
    expect(checkout.rules).toEqual(v2Rule)
  })

  it('a canary gives its hosts its rules, whole; the others keep the base', async () => {
    const base = setRouting(emptyDocument(), 'checkout', v2Rule, alice)
    const canaryRules = [{ when: 'header(x-version) = v2 && weight = 0', group: 'v2' }]
    const doc = setRouting(base, 'checkout', canaryRules, alice, { labels: { zone: 'a' } })
    expect(parseRuleDocument(JSON.stringify(doc))).toEqual(doc)
    expect(hostRules(doc, { host: 'h', labels: { zone: 'a' } }).routing).toEqual({ checkout: canaryRules })
    expect(hostRules(doc, { host: 'h', labels: {} }).routing).toEqual({ checkout: v2Rule })

    const source = new MemoryRuleSource()
    source.put(JSON.stringify(doc))
    const [a, b] = [namespace(), namespace()]
    const inA = router(a)
    const inB = router(b)
    keep(followRules({ rules: source, namespace: a, cacheDir: false, labels: { zone: 'a' }, log: () => undefined }))
    keep(followRules({ rules: source, namespace: b, cacheDir: false, labels: { zone: 'b' }, log: () => undefined }))
    await waitFor(() => inA.rules.length === 1 && inB.route(v2Header) === 'v2', { what: 'the canary and the base' })
    expect(inA.rules).toEqual(canaryRules)
    expect(inA.route(v2Header)).toBe('stable')
  })

  it('a document’s routing section is bounded and checked field by field', () => {
    const doc = setRouting(emptyDocument(), 'checkout', v2Rule, alice) as RuleDocument & Record<string, unknown>
    const bad = (routing: unknown) => () => parseRuleDocument(JSON.stringify({ ...doc, routing }))
    expect(bad({ 'a b': { rules: [] } })).toThrow(/routing\.a b/)
    expect(bad({ checkout: { rules: [], extra: 1 } })).toThrow(/routing\.checkout\.extra/)
    expect(bad({ checkout: {} })).toThrow(/routing\.checkout\.rules/)
    expect(bad({ checkout: { rules: [{ when: 'header(a)', group: '' }] } })).toThrow(
      /routing\.checkout\.rules\[0\]\.group/,
    )
    expect(bad(Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`r${i}`, { rules: [] }])))).toThrow(
      /at most 100 routers/,
    )
    expect(parseRuleDocument(JSON.stringify(doc)).routing).toEqual({ checkout: { rules: v2Rule } })
  })

  it('bulwark set --source routing.<router> null takes the router out of the document', async () => {
    const file = path.join(dir, `${namespace()}.json`)
    const src = ['--source', `file://${file}`, '--namespace', 'shop']
    expect((await bulwark('set', ...src, 'routing.checkout', JSON.stringify(v2Rule))).code).toBe(0)
    const removed = await bulwark('set', ...src, 'routing.checkout', 'null')
    expect(removed.out).toContain('routing.checkout removed: version 2 written')
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as RuleDocument
    expect(doc.routing).toEqual({})
    expect((await bulwark('set', ...src, 'routing.checkout', '[{oops')).err).toMatch(/the rules as JSON/)
  })
})
