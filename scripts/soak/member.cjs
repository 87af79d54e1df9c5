// The soak's second process: attaches to the same shared regions as the main one and keeps using them until told to
// stop; reports its own RSS with each answer.
'use strict'
const path = require('path')
const b = require(path.join(__dirname, '..', '..', 'dist', 'cjs'))

const prefix = process.argv[2]
const s = (kind) => `${prefix}-${kind}`
const bbr = new b.BbrLimiter({ shared: s('bbr'), queueDelay: false })
const circuit = new b.CircuitBreaker({ shared: s('cb'), minimumCalls: 50, failureRatio: 0.9, openDuration: 200 })
const topk = new b.HeavyKeeper({ shared: s('hk'), k: 50 })
const bucket = new b.TokenBucket({ rate: 50_000, shared: s('tb') })
let i = 0
const timer = setInterval(() => {
  for (let r = 0; r < 200; r++, i++) {
    const t = bbr.tryAcquire()
    if (t >= 0) bbr.release(t)
    if (circuit.tryAcquire()) circuit.recordSuccess(1)
    topk.add(`user-${i % 500}`)
    bucket.tryAcquire()
  }
  // Now and then, detach one component and attach it again: membership churn on a live region.
  if (i % 20_000 === 0) new b.SlidingWindowLimiter({ limit: 50_000, window: 1000, shared: s('sw') }).close()
}, 2)
process.on('message', (m) => {
  if (m === 'rss') return process.send({ rss: process.memoryUsage().rss })
  if (m === 'stop') {
    clearInterval(timer)
    for (const x of [bbr, circuit, topk, bucket]) x.close()
    process.send({ stopped: true, rounds: i }, () => process.exit(0))
  }
})
process.send({ ready: true })
