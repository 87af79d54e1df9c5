// One component's async execute() beside the `.then` floor, its own synchronous pair and its best peer's execute,
// alone in this process (bench/peers.bench.mjs starts several per component and says why). Prints one line of
// JSON: ns per call of each (median of interleaved rounds, CPU time) and `excess`, the median over rounds of
// execute - (floor + pair), each round's three figures taken within a fraction of a second of each other.
//   node bench/lib/execute-process.mjs <BbrLimiter | AdaptiveBulkhead | CircuitBreaker | SreBreaker> [rounds] [roundMs]
import { createRequire } from 'module'
import { asyncWork, onErr, onOk, work } from './guarded-work.mjs'
import { interleaved } from './interleaved.mjs'

const require = createRequire(import.meta.url)
const bulwark = require('../../dist/cjs')
const { bulkhead, circuitBreaker, handleAll, ConsecutiveBreaker } = require('cockatiel')

// The synchronous pairs, as the peers bench writes them.
const limiterPair = (limiter) => () => {
  const token = limiter.tryAcquire()
  if (token >= 0) {
    work()
    limiter.release(token)
  }
}
const breakerPair = (breaker) => () => {
  if (breaker.tryAcquire()) {
    work()
    breaker.recordSuccess()
  }
}
const peerBulkhead = () => bulkhead(1e9)
const peerBreaker = () => circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) })
// Each component with its pair and its peer. BbrLimiter has the peers bench's options: a queueing-delay target the
// bench's own loop never reaches (bench/peers.bench.mjs).
const COMPONENTS = {
  BbrLimiter: [() => new bulwark.BbrLimiter({ queueDelay: { target: 60_000 } }), limiterPair, peerBulkhead],
  AdaptiveBulkhead: [() => new bulwark.AdaptiveBulkhead(), limiterPair, peerBulkhead],
  CircuitBreaker: [() => new bulwark.CircuitBreaker(), breakerPair, peerBreaker],
  SreBreaker: [() => new bulwark.SreBreaker(), breakerPair, peerBreaker],
}

const [component, rounds = '15', roundMs = '20'] = process.argv.slice(2)
if (!(component in COMPONENTS)) {
  console.error(`usage: execute-process.mjs <${Object.keys(COMPONENTS).join(' | ')}> [rounds] [roundMs]`)
  process.exit(2)
}
const [make, pairOf, makePeer] = COMPONENTS[component]
const ours = make()
const peer = makePeer()
const results = await interleaved(
  [
    { name: 'floor', fn: () => asyncWork().then(onOk, onErr) },
    { name: 'pair', fn: pairOf(ours) },
    { name: 'ours', fn: () => ours.execute(asyncWork) },
    { name: 'peer', fn: () => peer.execute(asyncWork) },
  ],
  { rounds: Number(rounds), roundMs: Number(roundMs) },
)
const figure = (name) => results.get(name).ns
const perRound = (name) => results.get(name).rounds
const excess = perRound('ours')
  .map((v, r) => v - perRound('floor')[r] - perRound('pair')[r])
  .sort((a, b) => a - b)
ours.close?.()
process.stdout.write(
  `${JSON.stringify({
    ours: figure('ours'),
    floor: figure('floor'),
    pair: figure('pair'),
    peer: figure('peer'),
    excess: excess[excess.length >> 1],
  })}\n`,
)
