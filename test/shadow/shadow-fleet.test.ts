// The fleet's shadow flag (docs/readme/fleet.md): a source's `shadow: true` puts the host's components of that name
// in shadow mode, those made later included; metrics and `bulwark top` show their would-be refusals apart.
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'

import { BreakerGroup, CircuitBreaker, SreBreaker, TokenBucket } from '../../lib/index'
import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { setComponent } from '../../lib/ops/fleet/document-changes'
import { emptyDocument } from '../../lib/ops/fleet/rule-document'
import { followRules } from '../../lib/ops/fleet/rules-follower'
import { inspectRegions } from '../../lib/ops/top/inspect'
import { renderFrame } from '../../lib/ops/top/render-text'
import { parseAssignments } from '../../lib/ops/cli/set-command'
import { closeAfterEach } from '../helpers/close-after-each'
import { MemoryRuleSource } from '../helpers/memory-rule-source'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import { parsePrometheusText, valueOf } from '../observability/prometheus-text'
import '../helpers/cleanup-regions'

const alice = { author: 'alice' }
const keep = closeAfterEach()

describe('shadow mode from a rule source', () => {
  it("follows the source's flag per component, for components made later too, shown in metrics and top", async () => {
    const ns = uniqueName('sh')
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(-40)
    const source = new MemoryRuleSource()
    const bucket = keep(new TokenBucket({ rate: 1, burst: 1, shared: 'gw', namespace: ns }))
    const breaker = keep(
      new CircuitBreaker({ strategy: 'errorCount', failureCount: 1, minimumCalls: 1, shared: 'pay', namespace: ns }),
    )
    keep(followRules({ rules: source, namespace: ns, cacheDir: false, log: () => undefined }))
    let doc = setComponent(emptyDocument(), 'token-bucket.gw', { shadow: true }, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => bucket.stats().rules.shadow?.enabled === true, { what: 'the bucket in shadow mode' })
    expect([bucket.tryAcquire(), bucket.tryAcquire(), bucket.tryAcquire()]).toEqual([true, true, true])
    breaker.recordFailure()
    expect(breaker.tryAcquire()).toBe(false) // not named: it enforces

    // A member made later takes the flag with its region; a rule change keeps it.
    doc = setComponent(doc, 'token-bucket.gw', { rules: { rate: 2 } }, alice)
    source.put(JSON.stringify(doc))
    await waitFor(() => bucket.rate === 2, { what: 'the new rate' })
    const later = keep(new TokenBucket({ rate: 1, burst: 1, shared: 'gw', namespace: ns }))
    expect([later.tryAcquire(), later.tryAcquire()]).toEqual([true, true])

    const registry = new Registry()
    const metrics = keep(new PrometheusMetrics({ registry }))
    metrics.add('gw', bucket)
    metrics.add('pay', breaker)
    const { samples } = parsePrometheusText(await registry.metrics())
    const labels = { name: 'gw', component: 'ratelimit' }
    expect(valueOf(samples, 'bulwark_shadow_enabled', labels)).toBe(1)
    expect(valueOf(samples, 'bulwark_shadow_would_refuse_total', { ...labels, reason: 'rate' })).toBe(4)
    expect(valueOf(samples, 'bulwark_shadow_enabled', { name: 'pay' })).toBeUndefined() // never in shadow mode

    const frame = renderFrame({
      time: new Date().toISOString(),
      interval: 0,
      regions: inspectRegions({ names: [`${ns}/gw`] }),
    })
    expect(frame).toMatch(/SHADOW MODE[\s\S]*gw\s+shadow\s+rate 4/)

    source.put(JSON.stringify(setComponent(doc, 'token-bucket.gw', { shadow: false }, alice)))
    await waitFor(() => bucket.stats().rules.shadow?.enabled === false, { what: 'the bucket enforcing again' })
    expect(later.tryAcquire()).toBe(false)
  })

  it("a guard's breakers: a shared BreakerGroup follows its collection's flag (`sre.<shared>.*`), reported as one", async () => {
    const ns = uniqueName('shg')
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(-40)
    const source = new MemoryRuleSource()
    const options = { minimumCalls: 5, random: () => 0, namespace: ns }
    const group = keep(new BreakerGroup((_key, shared) => new SreBreaker({ ...options, shared }), { shared: 'deps' }))
    keep(followRules({ rules: source, namespace: ns, cacheDir: false, log: () => undefined }))
    const failing = group.get('https://a.example')!
    for (let i = 0; i < 10; i++) failing.recordFailure()
    expect(failing.tryAcquire()).toBe(false)
    source.put(JSON.stringify(setComponent(emptyDocument(), 'sre.deps.*', { shadow: true }, alice)))
    await waitFor(() => failing.tryAcquire(), { what: "the key's breaker in shadow mode" })
    const later = group.get('https://b.example')! // made after the change: takes the flag with its region
    for (let i = 0; i < 10; i++) later.recordFailure()
    expect(later.tryAcquire()).toBe(true)

    const registry = new Registry()
    keep(new PrometheusMetrics({ registry })).add('outbound', group)
    const { samples } = parsePrometheusText(await registry.metrics())
    expect(valueOf(samples, 'bulwark_shadow_enabled', { name: 'outbound', component: 'breaker' })).toBe(1)
    const counted = valueOf(samples, 'bulwark_shadow_would_refuse_total', { name: 'outbound', reason: 'open' })
    expect(counted).toBeGreaterThanOrEqual(2)
  })

  it('`bulwark set` takes shadow=on|off, and refuses another word naming the field', () => {
    expect(parseAssignments(['shadow=on', 'rate=5'])).toEqual({ shadow: 1, rate: 5 })
    expect(parseAssignments(['shadow=off'])).toEqual({ shadow: 0 })
    expect(() => parseAssignments(['shadow=maybe'])).toThrow(/`shadow`/)
  })
})
