// What a KeyedLimiter's table shows: `bulwark top` (a region it reads without joining), `bulwark set` (its live
// rule from a shell) and the metrics (per table, and its keys only when topKeys asks).
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'

import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { KeyedLimiter } from '../../lib/components/ratelimit/keyed-limiter'
import { setRule } from '../../lib/ops/cli/set-command'
import { inspectRegions } from '../../lib/ops/top/inspect'
import { renderFrame } from '../../lib/ops/top/render-text'
import type { KeyedTableView } from '../../lib/ops/top/views'
import { uniqueName } from '../helpers/unique-name'
import { parsePrometheusText, valueOf } from '../observability/prometheus-text'

const closing: Array<{ close(): void }> = []
afterEach(() => closing.splice(0).forEach((c) => c.close()))

function flooded(shared?: string): KeyedLimiter {
  const keyed = new KeyedLimiter({ rate: 1, burst: 3, maxKeys: 100, shared, now: () => 1000 })
  closing.push(keyed)
  for (let i = 0; i < 400; i++) keyed.tryAcquire('flooder')
  for (let i = 0; i < 40; i++) keyed.tryAcquire('\u001b[2Jterminal-trick')
  for (let i = 0; i < 5; i++) keyed.tryAcquire(`client-${i}`)
  return keyed
}

describe('KeyedLimiter table: top, set and metrics', () => {
  it('is shown by bulwark top: keys, slots, overflow, and the keys refused most, escaped', () => {
    const name = uniqueName('kt-top')
    flooded(name)
    const [report] = inspectRegions({ names: [name], keys: 5 })
    expect(report.kind).toBe('keyed-limiter')
    const view = report.view as KeyedTableView
    expect(view).toMatchObject({ type: 'keyed-table', component: 'KeyedLimiter', size: 7, capacity: 200, maxKeys: 100 })
    expect(view.refused).toBe(397 + 37)
    expect(view.heaviest[0]).toMatchObject({ key: 'flooder' })
    expect(view.rules.values).toEqual({ rate: 1, burst: 3 })
    const text = renderFrame({ time: new Date(0).toISOString(), interval: 0, regions: [report] })
    expect(text).toContain('KEYED TABLES')
    expect(text).toContain('7 / 200')
    expect(text).toContain('flooder')
    expect(text).not.toContain('\u001b[2J')
    expect(text).toContain('\\u001b[2Jterminal-trick')
  })

  it('takes a new rule from bulwark set, obeyed by every member', () => {
    const name = uniqueName('kt-set')
    const keyed = flooded(name)
    const stats = setRule(`keyed-limiter.${name}`, ['rate=100', 'burst=50'])
    expect(stats.values).toEqual({ rate: 100, burst: 50 })
    expect(keyed.rate).toBe(100)
    let admitted = 0
    for (let i = 0; i < 100; i++) admitted += Number(keyed.tryAcquire('someone-new'))
    expect(admitted).toBe(50)
    expect(() => setRule(`keyed-limiter.${name}`, ['burst=-1'])).toThrow(/burst/)
  })

  it('reports the table per table, its keys only when topKeys asks', async () => {
    for (const topKeys of [0, 2]) {
      const registry = new Registry()
      const metrics = new PrometheusMetrics({ registry, topKeys })
      closing.push(metrics)
      metrics.add('per-client', flooded())
      const { samples } = parsePrometheusText(await registry.metrics())
      const v = (metric: string, labels: Record<string, string>) =>
        valueOf(samples, `bulwark_ratelimit_${metric}`, labels)
      expect(v('keys', { name: 'per-client' })).toBe(7)
      expect(v('table_slots', { name: 'per-client' })).toBe(200)
      expect(v('table_decisions_total', { name: 'per-client', outcome: 'refused' })).toBe(397 + 37)
      expect(v('key_events_total', { name: 'per-client', event: 'created' })).toBe(7)
      const keys = samples.filter((s) => s.name === 'bulwark_ratelimit_heavy_key_refused')
      expect(keys.map((s) => s.labels.key)).toEqual(topKeys === 0 ? [] : ['flooder', '\u001b[2Jterminal-trick'])
    }
  })
})
