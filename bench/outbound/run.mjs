// The outbound scenario (issue 35): a simulated model provider answering 429 over 60 requests/min and 90 000
// tokens/min, each call's token cost (200-4 000) known only from its answer, called by 2 hosts x 4 workers that
// share the quota through Redis: bulwark (RedisQuota in undiciGuard, reserve 4 000 then settle the real cost),
// bottleneck (its Redis clustering: minTime for requests, a reservoir of tokens, weight = the mean cost) and p-queue
// (per process: the fleet's token rate at the mean cost, split over the workers), one after the other in one run.
//
//   node bench/outbound/run.mjs [--minutes 10] [--short] [--only bulwark]
//
// --short: 1 minute each (a smoke run; the first minute is dominated by the providers' full buckets).
import { execFileSync, fork, spawn } from 'child_process'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { machine, peer, writeTable } from '../harness.mjs'
import { startServer } from '../lib/redis-bench.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const flag = (name) => args.indexOf(name)
const minutes = flag('--short') >= 0 ? 1 : flag('--minutes') >= 0 ? Number(args[flag('--minutes') + 1]) : 10
const only = flag('--only') >= 0 ? args[flag('--only') + 1] : undefined
const HOSTS = 2
const WORKERS = 4
const CONCURRENCY = 4
const REQUESTS = 60
const TOKENS = 90_000

function canUnshare() {
  try {
    execFileSync('unshare', ['-m', 'true'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const provider = fork(path.join(here, 'provider.mjs'), [String(REQUESTS), String(TOKENS)], { stdio: 'inherit' })
const providerPort = await new Promise((resolve) => provider.once('message', (m) => resolve(m.port)))
const providerUrl = `http://127.0.0.1:${providerPort}`
const redis = await startServer()
const namespaces = canUnshare()

async function runHost(contender, endAt, runId) {
  const hostArgs = [String(WORKERS), contender, providerUrl, redis.url, String(endAt), String(CONCURRENCY), runId]
  hostArgs.push(String(HOSTS * WORKERS))
  const host = path.join(here, 'host.mjs')
  const child = namespaces
    ? spawn(
        'unshare',
        ['-m', 'sh', '-c', 'mount -t tmpfs tmpfs /dev/shm && exec "$0" "$@"', process.execPath, host, ...hostArgs],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      )
    : spawn(process.execPath, [host, ...hostArgs], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  await new Promise((resolve) => child.on('exit', resolve))
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}

const rows = []
for (const contender of ['bulwark', 'bottleneck', 'p-queue']) {
  if (only !== undefined && contender !== only) continue
  await fetch(`${providerUrl}/reset`)
  const endAt = Date.now() + minutes * 60_000
  const runId = `${Date.now()}-${contender}`
  const workers = (await Promise.all(Array.from({ length: HOSTS }, () => runHost(contender, endAt, runId)))).flat()
  const served = await (await fetch(`${providerUrl}/stats`)).json()
  const calls = served.ok + served.limited
  // What the provider could serve: its full bucket at the start, then its rate.
  const servable = TOKENS + TOKENS * minutes
  const errors = workers.reduce((sum, w) => sum + w.errors, 0)
  rows.push([
    contender,
    String(served.tokens),
    `${((100 * served.tokens) / servable).toFixed(1)} %`,
    String(calls),
    String(served.limited),
    `${calls === 0 ? '0' : ((100 * served.limited) / calls).toFixed(2)} %`,
    String(errors),
  ])
  console.error(`${contender}: ${JSON.stringify(served)} (${workers.length} workers)`)
}

provider.kill()
redis.stop()
writeTable(
  `Outbound: a model provider's quota shared by ${HOSTS} hosts x ${WORKERS} workers${minutes === 10 ? '' : ` (${minutes} min)`}`,
  ['limiter', 'tokens served', 'of the servable tokens', 'calls', '429 answers', 'share 429', 'caller errors'],
  rows,
  {
    peers: [peer('bottleneck'), peer('p-queue')],
    note:
      `${minutes} min per limiter; quota ${REQUESTS} requests and ${TOKENS} tokens a minute (token buckets, full at ` +
      `the start: at most ${TOKENS} + ${TOKENS} x minutes can be served); ${CONCURRENCY} callers per worker; ` +
      `hosts ${namespaces ? 'in mount namespaces of their own (own /dev/shm)' : 'as plain processes (unshare unavailable)'}. ` +
      machine(),
  },
)
