// One worker of the outbound scenario (bench/outbound/run.mjs): `concurrency` callers call the provider until
// `endAt` (Date.now() ms) through one contender's limiter, and print what they got.
import { createRequire } from 'module'
import { performance } from 'perf_hooks'
import { Agent, request } from 'undici-v7'

const require = createRequire(import.meta.url)
const [contender, providerUrl, redisUrl, endAtArg, concurrencyArg, runId, workersArg] = process.argv.slice(2)
const endAt = Number(endAtArg)
const concurrency = Number(concurrencyArg)
const workers = Number(workersArg)
const REQUESTS = 60
const TOKENS = 90_000
const MEAN_COST = 2100 // what a caller can estimate without the answer: the mean of 200-4 000
const counts = { ok: 0, limited: 0, tokens: 0, errors: 0 }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function call(dispatcher) {
  const res = await request(`${providerUrl}/v1/chat/completions`, { method: 'POST', body: '{}', dispatcher })
  const body = await res.body.json()
  return { res, body }
}

async function record(res, body) {
  if (res.statusCode === 200) {
    counts.ok++
    counts.tokens += body.usage.total_tokens
  } else if (res.statusCode === 429) {
    counts.limited++
    return Number(res.headers['retry-after'] ?? 1) * 1000
  }
  return 0
}

async function bulwark() {
  const { undiciGuard } = require('../../dist/cjs/entries/undici.js')
  const { RedisQuota } = require('../../dist/cjs/entries/redis.js')
  const Redis = require('ioredis')
  const redis = new Redis(redisUrl)
  const quota = new RedisQuota({ redis, name: `provider-${runId}`, window: 60_000, requests: REQUESTS, cost: TOKENS })
  const guard = undiciGuard({
    quotas: { [providerUrl]: { quota, estimate: 4000, maxWait: 120_000 } },
    bulkheads: false,
  })
  const dispatcher = new Agent().compose(guard)
  setTimeout(() => quota.close(), endAt - Date.now()) // the callers still waiting give up at the end
  const loop = async () => {
    while (Date.now() < endAt) {
      try {
        const { res, body } = await call(dispatcher)
        await record(res, body)
        res.context?.reservation?.settle(body.usage?.total_tokens ?? 0)
      } catch (error) {
        if (error?.reason !== 'queue-timeout' || Date.now() < endAt) counts.errors++
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  quota.close()
  redis.disconnect()
}

async function bottleneck() {
  const Bottleneck = require('bottleneck')
  const url = new URL(redisUrl)
  const limiter = new Bottleneck({
    id: `provider-${runId}`,
    datastore: 'ioredis',
    clientOptions: { host: url.hostname, port: Number(url.port) },
    minTime: 60_000 / REQUESTS,
    reservoir: TOKENS,
    reservoirIncreaseInterval: 1000,
    reservoirIncreaseAmount: TOKENS / 60,
    reservoirIncreaseMaximum: TOKENS,
  })
  const dispatcher = new Agent()
  setTimeout(() => limiter.stop({ dropWaitingJobs: true }).catch(() => undefined), endAt - Date.now())
  const loop = async () => {
    while (Date.now() < endAt) {
      try {
        const { res, body } = await limiter.schedule({ weight: MEAN_COST, expiration: 120_000 }, () => call(dispatcher))
        const wait = await record(res, body)
        if (wait > 0) await sleep(wait)
      } catch {
        if (Date.now() < endAt) counts.errors++
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  await limiter.disconnect(false)
}

async function pQueue() {
  const { default: PQueue } = await import('p-queue')
  // Per process: the fleet's token rate at the mean cost, split across the workers.
  const interval = Math.round((workers * 60_000 * MEAN_COST) / TOKENS)
  const queue = new PQueue({ intervalCap: 1, interval })
  const dispatcher = new Agent()
  const end = new AbortController()
  setTimeout(() => end.abort(), endAt - Date.now())
  const loop = async () => {
    while (Date.now() < endAt) {
      try {
        const { res, body } = await queue.add(() => call(dispatcher), { signal: end.signal })
        const wait = await record(res, body)
        if (wait > 0) await sleep(wait)
      } catch {
        if (Date.now() < endAt) counts.errors++
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
}

const start = performance.now()
await { bulwark, bottleneck, 'p-queue': pQueue }[contender]()
process.stdout.write(JSON.stringify({ ...counts, ms: performance.now() - start }) + '\n')
process.exit(0)
