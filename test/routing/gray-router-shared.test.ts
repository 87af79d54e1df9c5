// Gray routing host-wide: a worker thread and another process change the rules, this side routes by them at its
// next request (and the other way round); a region's rules win over a new router's; bulwark top and the exporters
// show the router, and `bulwark set` changes it.
import * as path from 'path'
import { Worker } from 'worker_threads'

import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'

import { GrayRouter } from '../../lib/index'
import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { inspectRegions } from '../../lib/ops/top/inspect'
import { renderFrame } from '../../lib/ops/top/render-text'
import '../helpers/cleanup-regions'
import { bulwarkHere as bulwark } from '../helpers/cli-in-process'
import { runScript } from '../helpers/run-script'
import { uniqueName } from '../helpers/unique-name'

const dist = path.resolve(__dirname, '..', '..', 'dist', 'cjs')
const namespace = 'routing-test'
const closing: Array<{ close(): void }> = []
const workers: Worker[] = []
afterEach(async () => {
  closing.splice(0).forEach((c) => c.close())
  await Promise.all(workers.splice(0).map((w) => w.terminate()))
})

const v2Header = { headers: { 'x-version': 'v2' } }

/** A worker thread with a router of `name`: it configures or routes on request, and answers. */
function routerThread(name: string) {
  const code = `
const { parentPort, workerData } = require('worker_threads')
const b = require(workerData.dist)
const r = new b.GrayRouter({ shared: workerData.name, namespace: workerData.ns, groups: ['stable', 'v2'], fallback: 'stable' })
parentPort.on('message', (m) => {
  try {
    if (m.configure) { r.configure(m.configure); parentPort.postMessage({ version: r.version }) }
    else parentPort.postMessage({ routed: m.route.map((request) => r.route(request)) })
  } catch (error) { parentPort.postMessage({ error: error.message }) }
})
parentPort.postMessage({ ready: true })`
  const worker = new Worker(code, { eval: true, workerData: { dist, name, ns: namespace } })
  workers.push(worker)
  const ask = (message: object) =>
    new Promise<{ version?: number; routed?: string[]; error?: string; ready?: boolean }>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.postMessage(message)
    })
  const ready = new Promise((resolve) => worker.once('message', resolve))
  return { ask, ready }
}

/** Runs `body` in another process with a router `r` of `name` (groups in another order: the same set). */
function inProcess(name: string, body: string, options = "groups: ['v2', 'stable'], fallback: 'stable'") {
  const run = runScript(
    `const r = new b.GrayRouter({ shared: ${JSON.stringify(name)}, namespace: '${namespace}', ${options} });\n${body}`,
  )
  expect(run.stderr).toBe('')
  return run.stdout.trim()
}

describe('GrayRouter, shared by the host', () => {
  it('a worker thread changes the rules and this thread routes by them at once; and the other way round', async () => {
    const name = uniqueName('route')
    const here = new GrayRouter({ shared: name, namespace, groups: ['stable', 'v2'], fallback: 'stable' })
    closing.push(here)
    const thread = routerThread(name)
    await thread.ready
    expect(here.route(v2Header)).toBe('stable')
    expect(await thread.ask({ configure: [{ when: 'header(x-version) = v2', group: 'v2' }] })).toEqual({ version: 4 })
    expect(here.route(v2Header)).toBe('v2') // no wait: the next request reads the new version
    expect(here.version).toBe(4)

    here.configure([{ when: 'method = POST', group: 'v2' }])
    expect(await thread.ask({ route: [{ method: 'POST' }, v2Header] })).toEqual({ routed: ['v2', 'stable'] })
    // A bad change from the thread is refused there and changes nothing here.
    const refused = await thread.ask({ configure: [{ when: 'weight = 101', group: 'v2' }] })
    expect(refused.error).toMatch(/rules\[0\]\.when/)
    expect(here.rules).toEqual([{ when: 'method = POST', group: 'v2' }])
  })

  it('another process configures, this one routes; this one configures, the other routes', () => {
    const name = uniqueName('route')
    const here = new GrayRouter({ shared: name, namespace, groups: ['stable', 'v2'], fallback: 'stable' })
    closing.push(here)
    expect(inProcess(name, `r.configure([{ when: 'path ^= /beta/', group: 'v2' }]); console.log(r.version)`)).toBe('4')
    expect(here.route({ url: '/beta/cart' })).toBe('v2')
    expect(here.route({ url: '/cart' })).toBe('stable')

    here.configure([{ when: 'cookie(track) = beta && weight = 50', group: 'v2' }])
    const seen = inProcess(
      name,
      `const groups = []; for (let k = 0; k < 200; k++) groups.push(r.route({ headers: { cookie: 'track=beta' } }, 'u' + k));
console.log(JSON.stringify(groups))`,
    )
    // The same keys, the same groups, in both processes.
    const mine = Array.from({ length: 200 }, (_, k) => here.route({ headers: { cookie: 'track=beta' } }, `u${k}`))
    expect(JSON.parse(seen)).toEqual(mine)
    expect(new Set(mine)).toEqual(new Set(['stable', 'v2']))

    // A router made with rules while the region holds some: the region's win, as other live rules.
    const given = `rules: [{ when: 'method = GET', group: 'v2' }], groups: ['stable', 'v2'], fallback: 'stable'`
    expect(JSON.parse(inProcess(name, 'console.log(JSON.stringify(r.rules))', given))).toEqual([
      { when: 'cookie(track) = beta && weight = 50', group: 'v2' },
    ])
    // Other groups than the region's routers declared: refused, naming them.
    const other = runScript(
      `try { new b.GrayRouter({ shared: ${JSON.stringify(name)}, namespace: '${namespace}', groups: ['stable', 'v3'], fallback: 'stable' }) }
catch (e) { console.log(e.code, e.field, e.message) }`,
    )
    expect(other.stdout).toMatch(/ERR_BULWARK_INVALID_OPTION groups .*declared \(stable, v2\)/)
  })

  it('bulwark top shows its rules, their version and the requests per group; the exporters count them', async () => {
    const name = uniqueName('route')
    const a = new GrayRouter({
      shared: name,
      namespace,
      groups: ['stable', 'v2'],
      fallback: 'stable',
      rules: [{ when: 'header(x-version) = v2', group: 'v2' }],
    })
    const b = new GrayRouter({ shared: name, namespace, groups: ['stable', 'v2'], fallback: 'stable' })
    closing.push(a, b)
    for (let i = 0; i < 3; i++) a.route(v2Header)
    b.route(v2Header)
    b.route({})
    expect(a.stats()).toMatchObject({ version: 2, rules: 1, routed: { stable: 0, v2: 3 } })
    expect(b.stats()).toMatchObject({ routed: { stable: 1, v2: 1 }, routedOnHost: { stable: 1, v2: 4 } })

    const [report] = inspectRegions({ names: [`routing.${name}`] })
    expect(report.view).toEqual({
      type: 'routing',
      version: 2,
      routes: [{ when: 'header(x-version) = v2', group: 'v2' }],
      unreadable: false,
      groups: [
        { group: 'stable', routed: 1 },
        { group: 'v2', routed: 4 },
      ],
    })
    const frame = renderFrame({ time: new Date().toISOString(), interval: 0, regions: [report] })
    expect(frame).toMatch(/GRAY ROUTING[\s\S]*2\s+1 rules\s+stable 1 · v2 4/)

    const registry = new Registry()
    const metrics = new PrometheusMetrics({ registry })
    closing.push(metrics)
    metrics.add('checkout', a)
    const scraped = await registry.metrics()
    expect(scraped).toContain('bulwark_routing_routed_total{name="checkout",group="v2"} 3')
    expect(scraped).toContain('bulwark_routing_routed_total{name="checkout",group="stable"} 0')
    expect(scraped).toContain('bulwark_routing_rules_version{name="checkout"} 2')

    // `bulwark set routing.<region>` on this host: checked against the declared groups, applied whole.
    const region = `routing.${namespace}.${name}`
    const set = await bulwark('set', region, '[{"when": "method = PUT", "group": "v2"}]')
    expect(set).toMatchObject({ code: 0, out: `${region}: 1 rules, version 4\n` })
    expect(a.route({ method: 'PUT' })).toBe('v2')
    const refused = await bulwark('set', region, '[{"when": "method = PUT", "group": "v9"}]')
    expect(refused).toMatchObject({ code: 2, err: expect.stringMatching(/rules\[0\]\.group` must be one of/) })
    expect(b.rules).toEqual([{ when: 'method = PUT', group: 'v2' }])
  })
})
