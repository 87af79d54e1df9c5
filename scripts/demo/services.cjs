// The demo's simulated backends, in process (no external service): a slow lookup that a hot-key cache can spare,
// and a downstream that fails for a phase of each run. Each costs what real ones do to a Node worker: CPU on the
// event loop (serialising, parsing) and time waiting on the network.
'use strict'
const { preciseNow } = require('../../dist/cjs')

/** Keeps the event loop busy for `ms` (the CPU a request costs a worker). */
function burn(ms) {
  const end = preciseNow() + ms
  while (preciseNow() < end) {}
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A database read: 3 ms of CPU (query, parse) and 10 ms on the network. */
async function slowLookup(key) {
  burn(3)
  await wait(10)
  return { key, price: key.length * 7 }
}

/**
 * A downstream service that answers in 10 ms, except between `failFrom` and `failTo` (host monotonic ms) when it
 * fails after a 50 ms timeout.
 */
function flakyDownstream(window) {
  return async () => {
    const now = preciseNow()
    if (now >= window.failFrom && now < window.failTo) {
      await wait(50)
      throw new Error('downstream timed out')
    }
    await wait(10)
    return 'ok'
  }
}

module.exports = { burn, slowLookup, flakyDownstream }
