// An upstream with a fixed concurrency: it serves CONCURRENCY requests at a time, SERVICE_MS each, and queues the
// rest in arrival order without bound (as a thread pool, a connection pool or a database does).
// GET /__set?concurrency=4&serviceMs=40 changes its capacity mid-run; GET /__stats tells what it served and the
// slot-milliseconds it was busy for: on a busy machine its timers fire late, so what it can serve is measured
// (served / busy slot-time x slots) rather than assumed.
// Prints its port once it listens.
'use strict'
const http = require('http')

let concurrency = Number(process.env.CONCURRENCY ?? 8)
let serviceMs = Number(process.env.SERVICE_MS ?? 20)
let busy = 0
let served = 0
let maxQueued = 0
let busySlotMs = 0 // the integral of busy slots over time
let lastChange = performance.now()
const queue = []
let head = 0

/** Adds the busy slot-time since the last change of `busy`; call before changing it. */
function account() {
  const now = performance.now()
  busySlotMs += busy * (now - lastChange)
  lastChange = now
}

function startWaiting() {
  account()
  while (busy < concurrency && head < queue.length) {
    const res = queue[head]
    queue[head++] = undefined
    busy++
    setTimeout(finish, serviceMs, res)
  }
  if (head > 65_536) {
    queue.splice(0, head)
    head = 0
  }
}

function finish(res) {
  account()
  busy--
  served++
  res.end('ok')
  startWaiting()
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/__set')) {
    const q = new URL(req.url, 'http://x').searchParams
    if (q.has('concurrency')) concurrency = Number(q.get('concurrency'))
    if (q.has('serviceMs')) serviceMs = Number(q.get('serviceMs'))
    startWaiting()
    return res.end(JSON.stringify({ concurrency, serviceMs }))
  }
  if (req.url.startsWith('/__stats')) {
    account()
    const queued = queue.length - head
    return res.end(JSON.stringify({ concurrency, serviceMs, busy, queued, maxQueued, served, busySlotMs }))
  }
  queue.push(res)
  if (queue.length - head > maxQueued) maxQueued = queue.length - head
  startWaiting()
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(server.address().port))
