// A simulated model provider (bench/outbound/run.mjs): requests and tokens per minute, each a token bucket refilled
// continuously up to a minute's worth, as the providers document theirs. A request's token cost (200-4 000) is
// drawn when it arrives and known to the caller only from the answer's body (usage.total_tokens); it is admitted when
// a request and that many tokens are there, else answered 429 with Retry-After. Answers take 300-1 500 ms and carry
// OpenAI's x-ratelimit-* headers.
import * as http from 'http'
import { performance } from 'perf_hooks'

const [requestsPerMinute, tokensPerMinute] = process.argv.slice(2).map(Number)

function bucket(perMinute) {
  return { level: perMinute, max: perMinute, rate: perMinute / 60_000, at: performance.now() }
}
function refill(b, now) {
  b.level = Math.min(b.max, b.level + (now - b.at) * b.rate)
  b.at = now
}

let requests = bucket(requestsPerMinute)
let tokens = bucket(tokensPerMinute)
let stats = { ok: 0, limited: 0, tokens: 0, since: performance.now() }
let seed = 12345
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31

const server = http.createServer((req, res) => {
  if (req.url === '/reset') {
    requests = bucket(requestsPerMinute)
    tokens = bucket(tokensPerMinute)
    stats = { ok: 0, limited: 0, tokens: 0, since: performance.now() }
    return res.end('{}')
  }
  if (req.url === '/stats') return res.end(JSON.stringify({ ...stats, ms: performance.now() - stats.since }))
  req.resume()
  req.on('end', () => {
    const now = performance.now()
    refill(requests, now)
    refill(tokens, now)
    const cost = 200 + Math.floor(random() * 3801)
    const headers = () => ({
      'content-type': 'application/json',
      'x-ratelimit-limit-requests': String(requestsPerMinute),
      'x-ratelimit-remaining-requests': String(Math.max(0, Math.floor(requests.level))),
      'x-ratelimit-limit-tokens': String(tokensPerMinute),
      'x-ratelimit-remaining-tokens': String(Math.max(0, Math.floor(tokens.level))),
    })
    if (requests.level < 1 || tokens.level < cost) {
      stats.limited++
      const wait = Math.max((1 - requests.level) / requests.rate, (cost - tokens.level) / tokens.rate, 0)
      res.writeHead(429, { ...headers(), 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) })
      return res.end('{"error":{"type":"rate_limit_exceeded"}}')
    }
    requests.level -= 1
    tokens.level -= cost
    stats.ok++
    stats.tokens += cost
    const answer = headers()
    setTimeout(
      () => {
        res.writeHead(200, answer)
        res.end(JSON.stringify({ usage: { total_tokens: cost } }))
      },
      300 + random() * 1200,
    )
  })
})
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }))
