// The fleet's rules and shadow flag for the outbound components (docs/readme/fleet.md): an undici guard's shared
// BulkheadPool follows its collection's entry (`bulkhead.<pool>.*`), the bulkheads of origins called later
// included; a saturated origin is then not refused, and what its bulkhead would have shed shows in the metrics.
import * as http from 'http'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { BulkheadPool, isBulkheadRejectedError, Priority, RetryBudget } from '../../lib/index'
import { undiciGuard } from '../../lib/entries/undici'
import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { setComponent } from '../../lib/ops/fleet/document-changes'
import { emptyDocument } from '../../lib/ops/fleet/rule-document'
import { followRules } from '../../lib/ops/fleet/rules-follower'
import { simulateUpstream } from '../adaptive/upstream-sim'
import { serving, type TestServer } from '../integrations/inbound-scenarios'
import { undiciMajors } from '../integrations/undici-majors'
import { ManualClock } from '../helpers/manual-clock'
import { closeAfterEach } from '../helpers/close-after-each'
import { MemoryRuleSource } from '../helpers/memory-rule-source'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import { parsePrometheusText, valueOf } from '../observability/prometheus-text'
import '../helpers/cleanup-regions'

const alice = { author: 'alice' }
const keep = closeAfterEach()

let origin: TestServer
beforeAll(async () => {
  origin = await serving(http.createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1'))
})
afterAll(async () => {
  await origin.close()
})

const namespace = () =>
  uniqueName('sho')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-40)

describe('shadow mode of the outbound components from a rule source', () => {
  it("an undici guard's shared pool: a saturated origin is not refused, the would-be sheds show", async () => {
    const { undici } = undiciMajors[0]
    const ns = namespace()
    const source = new MemoryRuleSource()
    const clock = new ManualClock(1000)
    const pool = keep(new BulkheadPool({ shared: 'outbound', now: clock.now, bulkhead: { namespace: ns } }))
    const guard = keep(undiciGuard({ bulkheads: pool, attempts: 1 }))
    const dispatcher = new undici.Agent().compose(guard)
    keep(followRules({ rules: source, namespace: ns, cacheDir: false, log: () => undefined }))
    const url = `http://127.0.0.1:${origin.port}`
    const call = () => undici.request(`${url}/`, { dispatcher }).then((res) => res.body.text())
    try {
      // The origin's bulkhead learns it saturated (a simulated upstream, on the pool's clock, which then stands
      // still): its limit is full, and a call is refused at once.
      const bulkhead = pool.get(url)!
      simulateUpstream(bulkhead, clock, [
        { rate: 1200, seconds: 3, concurrency: 8, serviceMs: 20, priority: () => Priority.normal },
      ])
      for (let held = 0; held < 1000 && bulkhead.tryAcquire() >= 0; held++);
      const refused = await call().catch((error: unknown) => error)
      expect(isBulkheadRejectedError(refused)).toBe(true)

      source.put(JSON.stringify(setComponent(emptyDocument(), 'bulkhead.outbound.*', { shadow: true }, alice)))
      await waitFor(() => bulkhead.stats().rules.shadow?.enabled === true, { what: "the origin's bulkhead in shadow" })
      await expect(call()).resolves.toBe('ok')
      await expect(call()).resolves.toBe('ok')
      expect(bulkhead.stats().rules.shadow?.wouldRefuse).toContainEqual({
        reason: 'latency',
        priority: 'normal',
        count: 2,
      })
      // An origin called later: its bulkhead's region is new, and takes the collection's flag with it.
      const later = pool.get('http://later.example:80')!
      expect(later.stats().rules.shadow?.enabled).toBe(true)

      const registry = new Registry()
      keep(new PrometheusMetrics({ registry })).add('outbound', pool)
      const { samples } = parsePrometheusText(await registry.metrics())
      const labels = { name: 'outbound', component: 'bulkhead' }
      expect(valueOf(samples, 'bulwark_shadow_enabled', labels)).toBe(1)
      const counted = { ...labels, reason: 'latency', priority: 'normal' }
      expect(valueOf(samples, 'bulwark_shadow_would_refuse_total', counted)).toBe(2)
    } finally {
      await dispatcher.close()
    }
  })

  it("a retry budget's rule and flag from the source; its grants past the budget are counted", async () => {
    const ns = namespace()
    const source = new MemoryRuleSource()
    const budget = keep(new RetryBudget({ shared: 'retries', namespace: ns, ratio: 0, minPerSecond: 0 }))
    keep(followRules({ rules: source, namespace: ns, cacheDir: false, log: () => undefined }))
    expect(budget.tryAcquire()).toBe(false)
    const doc = setComponent(emptyDocument(), 'retry-budget.retries', { shadow: true, rules: { ratio: 0.5 } }, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => budget.stats().rules.values.ratio === 0.5, { what: 'the new ratio' })
    expect([budget.tryAcquire(), budget.tryAcquire()]).toEqual([true, true])
    expect(budget.stats()).toMatchObject({ retries: 0, rules: { shadow: { enabled: true } } })

    const registry = new Registry()
    keep(new PrometheusMetrics({ registry })).add('retries', budget)
    const { samples } = parsePrometheusText(await registry.metrics())
    const labels = { name: 'retries', component: 'retry_budget', reason: 'budget' }
    expect(valueOf(samples, 'bulwark_shadow_would_refuse_total', labels)).toBe(2)
  })
})
