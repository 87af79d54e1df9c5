// The example gateway (examples/gateway/gateway.mjs, `npm run example:gateway`) starts by its one command against a
// real Redis, answers through its guard, and stops on SIGTERM leaving no shared region behind.
import { type ChildProcess, spawn } from 'child_process'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { listRegions } from '../../lib/index'
import { openRedis, redisTarget, type RedisServer } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import { get } from '../integrations/inbound-scenarios'

const script = path.join(__dirname, '..', '..', 'examples', 'gateway', 'gateway.mjs')
const target = redisTarget()

describe.skipIf(!target)('the example gateway', () => {
  let child: ChildProcess | undefined
  let server: RedisServer | undefined
  afterAll(async () => {
    child?.kill('SIGKILL')
    await server?.stop()
  })

  it('starts with one command, guards its routes, answers /ready and /metrics, and stops cleanly', async () => {
    const redis = await openRedis(target!)
    server = redis.server
    const namespace = uniqueName('example')
    const env = { ...process.env, PORT: '0', REDIS_URL: redis.url, BULWARK_NAMESPACE: namespace }
    child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout?.on('data', (d) => (out += d))
    child.stderr?.on('data', (d) => (out += d))
    await waitFor(() => /listening on http:\/\/127\.0\.0\.1:(\d+)/.test(out), { what: `the gateway to start: ${out}` })
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1])

    const product = await get(port, { 'x-api-key': 'k1' }, '/api/products/42')
    expect(product.status).toBe(200)
    expect(JSON.parse(product.body)).toMatchObject({ path: '/api/products/42' })
    expect(product.headers['ratelimit-policy']).toBe('"default";q=100;w=2')
    expect(product.headers.ratelimit).toBe('"default";r=99;t=1')
    const search = await get(port, {}, '/api/search?q=boots')
    expect(search.headers['ratelimit-policy']).toBe('"GET /api/search";q=10;w=2') // the route's own limit
    expect((await get(port, {}, '/health')).status).toBe(200)
    const ready = await get(port, {}, '/ready')
    expect([ready.status, ready.body]).toEqual([200, '{"ready":true}'])
    const metrics = await get(port, {}, '/metrics')
    expect(metrics.body).toMatch(/^bulwark_limiter_admitted_total\{name="gateway",priority="high"\} 1$/m)
    expect(metrics.body).toMatch(/^bulwark_ratelimit_redis_decisions_total\{name="api-keys",source="redis"\} 2$/m)
    // /health and this /metrics request: skipped routes, let past every limit
    expect(metrics.body).toMatch(/^bulwark_guard_access_total\{name="gateway",outcome="bypassed"\} 2$/m)
    expect(listRegions().filter((r) => r.includes(namespace))).not.toEqual([])

    const exited = new Promise<number | null>((resolve) => child?.once('exit', resolve))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(listRegions().filter((r) => r.includes(namespace))).toEqual([])
  }, 60_000)
})
