// Regression (issue 13): RedisRateLimiter exported no metrics; the exporters refused it as a component.
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'

import { OpenTelemetryMetrics } from '../../lib/ops/metrics/opentelemetry'
import { PrometheusMetrics } from '../../lib/ops/metrics/prometheus'
import type { RedisScriptClient } from '../../lib/components/ratelimit/redis/redis-options'
import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { parsePrometheusText, valueOf } from '../observability/prometheus-text'

class ManualReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** A limiter whose Redis admits the first call and refuses the second (wait 5 s), then errs. */
async function drivenLimiter(): Promise<RedisRateLimiter> {
  const replies: Array<() => unknown> = [
    () => [4, 0],
    () => [0, 5_000_000],
    () => {
      throw new Error('ERR boom')
    },
  ]
  const redis: RedisScriptClient = {
    evalsha: async () => replies.shift()!(),
    eval: async () => [0, 0],
    status: 'ready',
  }
  const limiter = new RedisRateLimiter({ redis, limit: 5, window: 60_000, openAfter: 1 })
  limiter.onError(() => undefined)
  await limiter.consume('a') // Redis admits
  await limiter.consume('a') // Redis refuses for 5 s
  await limiter.consume('a') // refused locally
  await limiter.consume('b') // an error: insurance, and the circuit opens (openAfter 1)
  return limiter
}

describe('RedisRateLimiter metrics', () => {
  it('Prometheus: decisions by source, failures by reason, calls, state, pending and locally refused keys', async () => {
    const registry = new Registry()
    const metrics = new PrometheusMetrics({ registry })
    metrics.add('fleet', await drivenLimiter())
    const { samples, types } = parsePrometheusText(await registry.metrics())
    const v = (name: string, labels: Record<string, string> = {}) =>
      valueOf(samples, `bulwark_ratelimit_${name}`, { name: 'fleet', ...labels })
    expect(v('redis_decisions_total', { source: 'redis' })).toBe(2)
    expect(v('redis_decisions_total', { source: 'local' })).toBe(1)
    expect(v('redis_decisions_total', { source: 'insurance' })).toBe(1)
    expect(v('redis_failures_total', { reason: 'error' })).toBe(1)
    expect(v('redis_failures_total', { reason: 'timeout' })).toBe(0)
    expect(v('redis_failures_total', { reason: 'not-ready' })).toBe(0)
    expect(v('redis_calls_total')).toBe(3)
    expect(v('redis_state', { state: 'insurance' })).toBe(1)
    expect(v('redis_state', { state: 'redis' })).toBe(0)
    expect(v('redis_pending')).toBe(0)
    expect(v('redis_refused_keys')).toBe(1)
    expect(types.get('bulwark_ratelimit_redis_decisions_total')).toBe('counter')
    expect(types.get('bulwark_ratelimit_redis_refused_keys')).toBe('gauge')
    metrics.close()
  })

  it('OpenTelemetry: the same instruments', async () => {
    const reader = new ManualReader()
    const provider = new MeterProvider({ readers: [reader] })
    const metrics = new OpenTelemetryMetrics({ meter: provider.getMeter('bulwark') })
    metrics.add('fleet', await drivenLimiter())
    const { resourceMetrics } = await reader.collect()
    const found = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
    const decisions = found.find((m) => m.descriptor.name === 'bulwark.ratelimit.redis.decisions')
    expect(decisions?.dataPointType).toBe(DataPointType.SUM)
    const bySource = Object.fromEntries(
      (decisions?.dataPoints ?? []).map((p) => [String(p.attributes['bulwark.source']), p.value as number]),
    )
    expect(bySource).toEqual({ redis: 2, local: 1, insurance: 1 })
    expect(found.map((m) => m.descriptor.name)).toContain('bulwark.ratelimit.redis.refused_key.count')
    metrics.close()
    await provider.shutdown()
  })
})
