// The server of the deadline scenario: one node:http process whose handler burns CPU_MS of CPU and then waits
// WAIT_MS (a downstream call). MODE: none | deadlines (deadline shedding alone) | bulwark (BbrLimiter) |
// bulwark-deadlines (BbrLimiter and deadline shedding). The clients send the milliseconds they will still wait in
// x-request-timeout-ms and as a deadline in x-request-deadline. GET /__stats tells how many handler runs were wasted: finished after their client left.
// Prints its port once it listens.
'use strict'
const http = require('http')
const { preciseNow } = require('../../../dist/cjs')
const { httpGuard } = require('../../../dist/cjs/entries/http')

const CPU_MS = Number(process.env.CPU_MS ?? 8)
const WAIT_MS = Number(process.env.WAIT_MS ?? 20)
const MODE = process.env.MODE ?? 'none'
const counts = { runs: 0, wasted: 0 }

function burn(ms) {
  const end = preciseNow() + ms
  while (preciseNow() < end) {}
}

function handler(req, res) {
  counts.runs++
  burn(CPU_MS)
  setTimeout(() => {
    if (req.socket.destroyed) counts.wasted++ // its client gave up: nobody receives this answer
    res.end('ok')
  }, WAIT_MS)
}

// The generator is ours (trusted) and on this host (one clock): the absolute deadline also counts the time a request
// waited in the kernel and behind the busy loop before the guard saw it.
const deadline = { header: 'x-request-deadline', absolute: true, trust: () => true }
const options = {
  none: undefined,
  deadlines: { limiter: false, deadline },
  bulwark: { limiter: {} },
  'bulwark-deadlines': { limiter: {}, deadline },
}[MODE]
const guarded = options === undefined ? handler : httpGuard(handler, options)

const server = http.createServer((req, res) => {
  if (req.url !== '/__stats') return guarded(req, res)
  const guard = guarded.guard?.stats()
  res.end(JSON.stringify({ ...counts, shedDeadline: guard?.shedDeadline ?? 0, clientGone: guard?.clientGone ?? 0 }))
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
