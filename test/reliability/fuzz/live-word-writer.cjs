// The other thread of the live-words fuzz target (targets/live-words.cjs): attaches the component the main thread
// names and writes random 32-bit words at random places of its payload (lock words, breaker words, window cells)
// until told to stop, as a corrupting member of the same user would. The header is left alone: a same-user process
// that rewrites it is a documented limit (docs/guide/trust.md).
'use strict'
const { parentPort } = require('worker_threads')
const b = require('../../../dist/cjs')

let current
let timer

function scribble() {
  const { i32, from, to, random } = current
  for (let i = 0; i < 2000; i++) Atomics.store(i32, from + Math.floor(random() * (to - from)), (random() * 2 ** 32) | 0)
  timer = setImmediate(scribble)
}

/** A small deterministic generator (mulberry32), so that a fuzz run is reproduced from its seed. */
function seeded(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

parentPort.on('message', (m) => {
  if (m.stop) {
    clearImmediate(timer)
    current.component.close()
    current = undefined
    parentPort.postMessage('stopped')
    return
  }
  const component = new b[m.kind](m.options)
  // Reaching into the component on purpose: its region is what this thread corrupts.
  const region = component.region
  const from = region.base >> 2
  current = { component, i32: region.i32, from, to: region.i32.length, random: seeded(m.seed) }
  scribble()
  parentPort.postMessage('writing')
})
