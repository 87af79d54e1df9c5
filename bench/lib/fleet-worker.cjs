// A worker process of the fleet benchmark (bench/fleet.bench.mjs): an application that follows its rule source
// with no code for it (BULWARK_RULES in its environment), serving a steady load through a shared TokenBucket `gw`.
// It reports to its host (IPC) every change of what it obeys: { pid, rate, version, watching, sourceUp, fromDisk,
// at }, `at` in ms since the epoch with a fraction (performance.timeOrigin + now: comparable across processes),
// and once a second how many requests it served and how many failed.
'use strict'
const { performance } = require('perf_hooks')
const { TokenBucket } = require('../../dist/cjs')
const fleet = require('../../dist/cjs/entries/fleet')

const bucket = new TokenBucket({ rate: 1000, burst: 1000, shared: 'gw' })
let served = 0
let failed = 0
let last = ''

const look = () => {
  // The load: a few requests every millisecond, each a decision of the shared bucket (never an exception).
  for (let i = 0; i < 5; i++) {
    try {
      bucket.tryAcquire()
      served++
    } catch {
      failed++
    }
  }
  const follower = fleet.rulesFollower()
  const s = follower?.stats()
  const state = {
    pid: process.pid,
    rate: bucket.stats().rules.values.rate,
    version: s?.version ?? -1,
    watching: follower?.watching ?? false,
    sourceUp: s?.sourceUp ?? false,
    fromDisk: s?.fromDisk ?? false,
  }
  const key = JSON.stringify(state)
  if (key === last) return
  last = key
  process.send({ type: 'state', ...state, at: performance.timeOrigin + performance.now() })
}
setInterval(look, 1)
setInterval(() => process.send({ type: 'load', pid: process.pid, served, failed }), 1000)
process.on('message', (m) => m === 'stop' && process.exit(0))
