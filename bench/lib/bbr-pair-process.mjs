// One BbrLimiter variant's synchronous pair beside cockatiel's bulkhead, alone in this process (bench/peers.bench.mjs
// starts several per variant and says why). Prints one line of JSON: ns per call of each (median of interleaved
// rounds, CPU time) and the load the limiter read at the end.
//   node bench/lib/bbr-pair-process.mjs <default | function | shared> [rounds] [roundMs]
import { createRequire } from 'module'
import { interleaved } from './interleaved.mjs'

const require = createRequire(import.meta.url)
const { BbrLimiter } = require('../../dist/cjs')
const { bulkhead } = require('cockatiel')

// The options of the peers bench's in-process limiters: a queueing-delay target the bench's own loop never reaches.
const admitting = { queueDelay: { target: 60_000 } }
const VARIANTS = {
  default: admitting,
  function: { ...admitting, signal: () => 0 },
  shared: { ...admitting, shared: `bench-peers-${process.pid}` },
}

const [variant, rounds = '15', roundMs = '20'] = process.argv.slice(2)
if (!(variant in VARIANTS)) {
  console.error(`usage: bbr-pair-process.mjs <${Object.keys(VARIANTS).join(' | ')}> [rounds] [roundMs]`)
  process.exit(2)
}

let sink = 0
const work = () => ++sink
const limiter = new BbrLimiter(VARIANTS[variant])
const peer = bulkhead(1e9)
const cases = [
  {
    name: 'ours',
    fn: () => {
      const token = limiter.tryAcquire()
      if (token >= 0) {
        work()
        limiter.release(token)
      }
    },
  },
  { name: 'peer', fn: () => peer.execute(work) },
]
const results = await interleaved(cases, { rounds: Number(rounds), roundMs: Number(roundMs) })
const load = limiter.stats().load
limiter.close()
process.stdout.write(`${JSON.stringify({ ours: results.get('ours').ns, peer: results.get('peer').ns, load })}\n`)
