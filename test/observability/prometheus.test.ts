import { Registry } from 'prom-client'
import { afterEach, describe, expect, it, vi } from 'vitest'

import { InvalidArgumentError, InvalidOptionError } from '../../lib/index'
import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import { fullLimiter } from '../integrations/queue-scenarios'
import { drivenComponents } from './components'
import { parsePrometheusText, valueOf } from './prometheus-text'

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((c) => c()))

function setup(options: ConstructorParameters<typeof PrometheusMetrics>[0] = {}) {
  const registry = new Registry()
  const metrics = new PrometheusMetrics({ registry, ...options })
  const c = drivenComponents()
  cleanups.push(c.close, () => metrics.close())
  const scrape = async () => parsePrometheusText(await registry.metrics())
  return { registry, metrics, c, scrape }
}

describe('PrometheusMetrics', () => {
  it("reports a limiter's admission queue: requests waiting now and those that timed out", async () => {
    const { registry, metrics } = setup()
    const { limiter, clock, releaseHeld } = fullLimiter(20)
    cleanups.push(() => limiter.close())
    metrics.add('queued', limiter)
    const first = limiter.execute(async () => 1).catch((e: unknown) => e)
    void limiter.execute(async () => 2).catch(() => undefined)
    const samples = async () => parsePrometheusText(await registry.metrics()).samples
    expect(valueOf(await samples(), 'bulwark_limiter_queue_pending', { name: 'queued' })).toBe(2)
    clock.advance(20)
    await first
    const after = await samples()
    expect(valueOf(after, 'bulwark_limiter_queue_pending', { name: 'queued' })).toBe(0)
    expect(valueOf(after, 'bulwark_limiter_queue_timeouts_total', { name: 'queued' })).toBe(2)
    releaseHeld()
  })

  it('exposes every kind of component with Prometheus names, types and labels, read when scraped', async () => {
    const { metrics, c, scrape } = setup({ topKeys: 1 })
    metrics.add('api', c.limiter)
    metrics.add('payments', c.sre)
    metrics.add('orders', c.circuit)
    metrics.add('upstreams', c.group)
    metrics.add('products', c.topk)
    metrics.add('catalog', c.cache)
    metrics.add('login', c.bucket)
    metrics.add('signup', c.window)
    metrics.add('per-client', c.keyed)
    metrics.add('retries', c.budget)
    metrics.add('edge', c.handler) // an adapter stands for its guard
    metrics.add('outbound', c.bulkheads)
    metrics.add('tenants', c.perKey)
    metrics.add('items', c.hotParameters)
    const { samples, types, help } = await scrape()
    const v = (name: string, labels: Record<string, string> = {}) => valueOf(samples, `bulwark_${name}`, labels)

    expect(v('limiter_in_flight', { name: 'api' })).toBe(3)
    expect(v('limiter_max_in_flight', { name: 'api' })).toBe(2)
    expect(v('limiter_load_ratio', { name: 'api' })).toBe(1)
    expect(v('limiter_min_response_time_seconds', { name: 'api' })).toBe(0.001)
    expect(v('limiter_admitted_total', { name: 'api', priority: 'normal' })).toBe(2)
    expect(v('limiter_admitted_total', { name: 'api', priority: 'critical' })).toBe(1)
    expect(v('limiter_shed_total', { name: 'api', priority: 'low', reason: 'in-flight' })).toBe(3)
    expect(v('limiter_shed_total', { name: 'api', priority: 'low', reason: 'queue-delay' })).toBe(0)
    expect(v('limiter_shed_total', { name: 'api', priority: 'normal', reason: 'in-flight' })).toBe(0)
    expect(types.get('bulwark_limiter_shed_total')).toBe('counter')
    expect(types.get('bulwark_limiter_in_flight')).toBe('gauge')
    expect(help.get('bulwark_limiter_shed_total')).toContain('by priority class and reason')

    expect(v('breaker_state', { name: 'payments', state: 'open' })).toBe(1)
    expect(v('breaker_state', { name: 'payments', state: 'closed' })).toBe(0)
    expect(v('breaker_drop_ratio', { name: 'payments' })).toBeCloseTo(15 / 26, 12)
    expect(v('breaker_failure_ratio', { name: 'payments' })).toBeCloseTo(0.8, 12)
    expect(v('breaker_window_requests', { name: 'payments' })).toBe(25)
    expect(v('breaker_state', { name: 'orders', state: 'open' })).toBe(1)
    expect(v('breaker_state', { name: 'orders', state: 'half-open' })).toBe(0)
    expect(v('breaker_failure_ratio', { name: 'orders' })).toBe(1)
    expect(v('breaker_group_keys', { name: 'upstreams' })).toBe(2)
    expect(v('breaker_state', { name: 'upstreams', key: 'failing', state: 'open' })).toBe(1)
    expect(v('breaker_state', { name: 'upstreams', key: 'healthy', state: 'closed' })).toBe(1)

    expect(v('hotkeys_counted', { name: 'products' })).toBe(50)
    expect(
      samples.filter((s) => s.name === 'bulwark_hotkeys_top_key_occurrences' && s.labels.name === 'products'),
    ).toEqual([
      { name: 'bulwark_hotkeys_top_key_occurrences', labels: { name: 'products', key: 'x' }, value: 30 }, // topKeys: 1
    ])
    expect(v('hotkeys_cached_values', { name: 'catalog' })).toBe(1)
    expect(v('hotkeys_top_key_occurrences', { name: 'catalog', key: 'product-1' })).toBe(1)

    expect(v('ratelimit_available', { name: 'login' })).toBe(15)
    expect(v('ratelimit_capacity', { name: 'login' })).toBe(20)
    expect(v('ratelimit_available', { name: 'signup' })).toBe(6)
    expect(v('ratelimit_capacity', { name: 'signup' })).toBe(10)
    expect(v('ratelimit_keys', { name: 'per-client' })).toBe(2)
    expect(v('ratelimit_key_events_total', { name: 'per-client', event: 'created' })).toBe(2)
    expect(v('retry_budget_requests', { name: 'retries' })).toBe(10)
    expect(v('retry_budget_retries', { name: 'retries' })).toBe(1)
    expect(v('guard_rate_limited_total', { name: 'edge' })).toBe(1)
    expect(v('guard_connection_shed_total', { name: 'edge' })).toBe(1)
    expect(v('guard_application_errors_total', { name: 'edge', source: 'callback' })).toBe(1)
    expect(v('guard_application_errors_total', { name: 'edge', source: 'fallback' })).toBe(1)

    expect(v('key_concurrency_max', { name: 'tenants' })).toBe(2)
    expect(v('key_concurrency_in_flight', { name: 'tenants' })).toBe(3)
    expect(v('key_concurrency_keys', { name: 'tenants' })).toBe(2)
    expect(v('key_concurrency_requests_total', { name: 'tenants', outcome: 'admitted' })).toBe(3)
    expect(v('key_concurrency_requests_total', { name: 'tenants', outcome: 'shed' })).toBe(1)
    expect(v('key_concurrency_key_in_flight', { name: 'tenants', key: 'acme' })).toBe(2)
    expect(v('key_concurrency_key_in_flight', { name: 'tenants', key: 'globex' })).toBeUndefined() // topKeys: 1
    c.perKey.configure({ max: 5 })
    expect(valueOf((await scrape()).samples, 'bulwark_key_concurrency_max', { name: 'tenants' })).toBe(5)

    expect(v('hot_parameter_limited_values', { name: 'items' })).toBe(2)
    expect(v('hot_parameter_refused_total', { name: 'items', reason: 'hot' })).toBe(1)
    expect(v('hot_parameter_refused_total', { name: 'items', reason: 'others' })).toBe(1)
    expect(v('hot_parameter_refused_total', { name: 'items', reason: 'invalid-argument' })).toBe(1)
    expect(types.get('bulwark_hot_parameter_refused_total')).toBe('counter')
    expect(
      samples.filter((s) => s.name === 'bulwark_hot_parameter_hot_value_occurrences' && s.labels.name === 'items'),
    ).toEqual([
      { name: 'bulwark_hot_parameter_hot_value_occurrences', labels: { name: 'items', key: 'item-1' }, value: 3 }, // topKeys: 1
    ])

    const inventory = { name: 'outbound', upstream: 'http://inventory:80' }
    const pricing = { name: 'outbound', upstream: 'http://pricing:80' }
    expect(v('bulkhead_upstreams', { name: 'outbound' })).toBe(2)
    expect(v('bulkhead_shedding', inventory)).toBe(1)
    expect(v('bulkhead_shedding', pricing)).toBe(0)
    expect(v('bulkhead_limit', inventory)).toBe(c.bulkheads.get(inventory.upstream)!.stats().latency.limit)
    expect(v('bulkhead_in_flight', inventory)).toBeGreaterThan(0)
    expect(v('bulkhead_base_response_time_seconds', inventory)).toBeCloseTo(0.02, 3)
    expect(v('bulkhead_calls_total', { ...inventory, outcome: 'shed' })).toBeGreaterThan(1000)
    expect(v('bulkhead_calls_total', { ...pricing, outcome: 'admitted' })).toBe(0)
    expect(v('limiter_latency_shedding', { name: 'api' })).toBe(0)
    expect(v('limiter_latency_limit', { name: 'api' })).toBe(c.limiter.stats().latency?.limit)

    for (const s of samples) expect(s.name).toMatch(/^bulwark_[a-z_]+$/)
    for (const [name] of [...types].filter(([, type]) => type === 'counter')) expect(name).toMatch(/_total$/)
  })

  it('reads each component once per scrape, counters only grow, and a disposed component leaves', async () => {
    const { metrics, c, scrape } = setup()
    const added = metrics.add('api', c.limiter)
    const stats = vi.spyOn(c.limiter, 'stats')
    await scrape()
    expect(stats).toHaveBeenCalledTimes(1)
    c.limiter.tryAcquire('low')
    const after = await scrape()
    expect(
      valueOf(after.samples, 'bulwark_limiter_shed_total', { name: 'api', priority: 'low', reason: 'in-flight' }),
    ).toBe(4)
    added.dispose()
    expect((await scrape()).samples.filter((s) => s.labels.name === 'api')).toEqual([])
  })

  it('takes a prefix, and removes its metrics from the registry on close', async () => {
    const { registry, metrics, c, scrape } = setup({ prefix: 'gw_' })
    metrics.add('api', c.limiter)
    expect(valueOf((await scrape()).samples, 'gw_limiter_in_flight', { name: 'api' })).toBe(3)
    metrics.close()
    expect(await registry.metrics()).toBe('\n')
  })

  it('reports no hot key, hot value or busy key as a label unless topKeys asks for them (personal data)', async () => {
    const { metrics, c, scrape } = setup()
    metrics.add('products', c.topk)
    metrics.add('items', c.hotParameters)
    metrics.add('tenants', c.perKey)
    const { samples } = await scrape()
    expect(samples.filter((s) => s.labels.key !== undefined)).toEqual([])
    expect(valueOf(samples, 'bulwark_key_concurrency_in_flight', { name: 'tenants' })).toBe(3)
    expect(valueOf(samples, 'bulwark_key_concurrency_keys', { name: 'tenants' })).toBe(2)
    expect(valueOf(samples, 'bulwark_hotkeys_counted', { name: 'products' })).toBeGreaterThan(0)
    expect(valueOf(samples, 'bulwark_hot_parameter_limited_values', { name: 'items' })).toBe(2)
  })

  it('rejects bad options and arguments with typed errors naming them', () => {
    const { metrics, c } = setup()
    expect(() => new PrometheusMetrics({ prefix: 'no spaces' })).toThrow(InvalidOptionError)
    expect(() => new PrometheusMetrics({ prefix: 'no spaces' })).toThrow(/option `prefix`/)
    expect(() => new PrometheusMetrics({ registry: {} as never })).toThrow(
      /option `registry` must be a prom-client Registry/,
    )
    expect(() => new PrometheusMetrics({ topKeys: -1 })).toThrow(/option `topKeys`/)
    expect(() => metrics.add('x', {})).toThrow(InvalidArgumentError)
    expect(() => metrics.add('x', {})).toThrow(/argument `component` must be a BbrLimiter/)
    expect(() => metrics.add('', c.limiter)).toThrow(/argument `name`/)
    metrics.add('api', c.limiter)
    expect(() => metrics.add('api', c.handler)).toThrow(/a name no other limiter component was added under/)
    expect(() => metrics.add('api', c.sre)).not.toThrow() // another family
  })

  it('leaves a component that cannot be read out of the scrape, with one warning', async () => {
    const { metrics, c, scrape } = setup()
    metrics.add('api', c.limiter)
    metrics.add('broken', c.bucket)
    vi.spyOn(c.bucket, 'available').mockImplementation(() => {
      throw new Error('boom')
    })
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    cleanups.push(() => process.off('warning', onWarning))
    const { samples } = await scrape()
    await scrape()
    await new Promise((r) => setImmediate(r))
    expect(samples.some((s) => s.labels.name === 'broken')).toBe(false)
    expect(valueOf(samples, 'bulwark_limiter_in_flight', { name: 'api' })).toBe(3)
    expect(warnings).toEqual(["bulwark metrics: 'broken' could not be read: boom"])
  })
})
