// The server under test: a node:cluster of workers whose handler burns CPU_MS of CPU and then waits WAIT_MS
// (a downstream call). MODE picks the protection: none | static | overload-protection | under-pressure (Fastify
// with @fastify/under-pressure) | bulwark | guard (bulwark's httpGuard) | guard-at-flush (the same limiter, its
// token released when the answer has reached the kernel, as the adapters of 0.x did). In the guard modes, GET /big
// costs what any request costs and is answered BIG_BYTES: what a client that never reads asks for. With FAIR=1, bulwark's limiter sheds heavy tenants first (the tenant is
// the path: /t/<tenant>). With MAX_WAIT (ms), bulwark's handler runs through limiter.execute() on a limiter made
// with that maxWait (0: execute() without a queue), so that a refused request may wait for a slot. With
// LATENCY=off, its latency rule is off. GET /__stats answers the limiter's stats (host-wide: the workers share it).
// With DIAG=1, each request that carries `x-sent` (the lean generator's stampSend) is recorded: how long it waited
// before its handler ran, how long this loop turn had already run then, its status and its time in the handler; GET
// /__diag answers this worker's records (bench/overload/lib/diagnosis.mjs reads them).
// BULWARK_DIST=<path to dist/cjs> runs another build. The primary prints the port once every worker listens.
'use strict'
const cluster = require('cluster')
const http = require('http')

const WORKERS = Number(process.env.WORKERS ?? 2)
const CPU_MS = Number(process.env.CPU_MS ?? 4)
const WAIT_MS = Number(process.env.WAIT_MS ?? 20)
const MODE = process.env.MODE ?? 'none'
const STATIC_LIMIT = Number(process.env.STATIC_LIMIT ?? 16)
const SHARED = process.env.SHARED ?? `overload-${process.ppid}`

if (cluster.isPrimary) {
  // Stopping (the scenario's SIGTERM): the workers go first, then the primary. A primary that left first would close
  // the IPC channel under workers still taking connections, and their round-robin acknowledgement would fail with
  // EPIPE (an unhandled 'error' stack on the bench's output).
  process.once('SIGTERM', () => {
    const workers = Object.values(cluster.workers)
    if (workers.length === 0) process.exit(0)
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers).length === 0) process.exit(0)
    })
    for (const worker of workers) worker.process.kill('SIGTERM')
    setTimeout(() => process.exit(0), 5000).unref() // a worker that ignores SIGTERM does not hold the scenario
  })
  const server = http.createServer()
  server.listen(0, '127.0.0.1', () => {
    const port = server.address().port
    server.close()
    let listening = 0
    for (let i = 0; i < WORKERS; i++) {
      cluster.fork({ PORT: String(port) }).on('listening', () => {
        if (++listening === WORKERS) console.log(port)
      })
    }
  })
} else {
  // BULWARK_DIST: another build's dist/cjs (A/B runs of two builds on the same scenario).
  const dist = process.env.BULWARK_DIST ?? '../../../dist/cjs'
  const { BbrLimiter, Priority, preciseNow } = require(dist)

  const burn = (ms) => {
    const end = preciseNow() + ms
    while (preciseNow() < end) {}
  }
  const work = (res, done, body = 'ok') => {
    burn(CPU_MS)
    setTimeout(() => {
      res.end(body)
      done()
    }, WAIT_MS)
  }
  const shed = (res) => {
    res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' })
    res.end('{"error":"overloaded"}')
  }

  /** Records where each stamped request spent its time (DIAG=1). */
  const diagnosed = (inner) => {
    const hr = () => Number(process.hrtime.bigint()) / 1e6
    const rec = { sent: [], wait: [], turn: [], status: [], service: [], critical: [] }
    let turnAt = -1
    const clearTurn = () => (turnAt = -1)
    return (req, res) => {
      if (req.url === '/__diag') return res.end(JSON.stringify({ worker: cluster.worker.id, ...rec }))
      const sent = Number(req.headers['x-sent'])
      if (!(sent > 0)) return inner(req, res)
      const start = hr()
      // The first request of this loop turn marks its start; setImmediate runs once the turn's I/O is done.
      if (turnAt < 0) {
        turnAt = start
        setImmediate(clearTurn)
      }
      const i = rec.sent.push(sent) - 1
      rec.wait.push(start - sent)
      rec.turn.push(start - turnAt)
      rec.critical.push(req.headers['x-priority'] === 'critical' ? 1 : 0)
      rec.status.push(0)
      rec.service.push(0)
      res.on('finish', () => {
        rec.status[i] = res.statusCode
        rec.service[i] = hr() - start
      })
      inner(req, res)
    }
  }

  // Each second, this worker's loop utilisation (the share of the second its loop was not waiting for I/O) and its
  // CPU time, stamped with the host's monotonic clock; GET /__loop answers them (bench/overload/lib/cpu-split.mjs).
  // A loop busy all the time on less CPU than that was waiting for a core; a loop that idles had nothing admitted.
  const loop = { worker: cluster.worker.id, at: [], elu: [], cpu: [] }
  let lastElu = performance.eventLoopUtilization()
  let lastCpu = process.cpuUsage()
  setInterval(() => {
    const elu = performance.eventLoopUtilization()
    const cpu = process.cpuUsage()
    loop.at.push(Number(process.hrtime.bigint()) / 1e6)
    loop.elu.push(performance.eventLoopUtilization(elu, lastElu).utilization)
    loop.cpu.push((cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1e6)
    lastElu = elu
    lastCpu = cpu
  }, 1000).unref()

  let handler
  if (MODE === 'bulwark') {
    const fair = process.env.FAIR === '1'
    const maxWait = process.env.MAX_WAIT === undefined ? undefined : Number(process.env.MAX_WAIT)
    const limiter = new BbrLimiter({
      shared: SHARED,
      fairness: fair,
      maxWait,
      ...(process.env.LATENCY === 'off' && { latency: false }),
    })
    if (process.env.TRACE) {
      setInterval(() => {
        const s = limiter.stats()
        console.error(
          `w${cluster.worker.id} load=${s.load.toFixed(0)} inFlight=${s.inFlight} max=${s.maxInFlight} maxPass=${s.maxPass} minRt=${s.minRt.toFixed(1)} frac=${s.admitFraction.toFixed(2)} delay=${s.queueDelay.toFixed(1)} shedIF=${s.shedInFlight} shedQD=${s.shedQueueDelay} admitted=${s.admitted}`,
        )
      }, 500).unref()
    }
    const viaExecute = (req, res) => {
      const priority = req.headers['x-priority'] === 'critical' ? Priority.critical : Priority.normal
      limiter.execute(() => new Promise((resolve) => work(res, resolve)), { priority }).catch(() => shed(res))
    }
    handler = (req, res) => {
      if (req.url === '/__stats') return res.end(JSON.stringify(limiter.stats()))
      if (maxWait !== undefined) return viaExecute(req, res)
      const priority = req.headers['x-priority'] === 'critical' ? Priority.critical : Priority.normal
      const token = limiter.tryAcquire(priority, fair && req.url.startsWith('/t/') ? req.url.slice(3) : undefined)
      if (token < 0) return shed(res)
      work(res, () => limiter.release(token))
    }
  } else if (MODE === 'guard' || MODE === 'guard-at-flush') {
    const big = Buffer.alloc(Number(process.env.BIG_BYTES ?? 1 << 20), 'x')
    // /big costs what any request costs; only its answer is large.
    const answer = (req, res) => work(res, () => {}, req.url === '/big' ? big : 'ok')
    const critical = (req) => req.headers['x-priority'] === 'critical'
    let guarded
    let limiter
    if (MODE === 'guard') {
      const { httpGuard } = require(`${dist}/entries/http`)
      guarded = httpGuard(answer, {
        limiter: { shared: SHARED },
        priority: (r) => (critical(r) ? 'critical' : 'normal'),
      })
      limiter = guarded.guard.limiter
    } else {
      limiter = new BbrLimiter({ shared: SHARED })
      guarded = (req, res) => {
        const token = limiter.tryAcquire(critical(req) ? Priority.critical : Priority.normal)
        if (token < 0) return shed(res)
        let held = true
        const release = () => {
          if (!held) return
          held = false
          limiter.release(token)
        }
        res.on('finish', release)
        res.on('close', release)
        answer(req, res)
      }
    }
    handler = (req, res) => (req.url === '/__stats' ? res.end(JSON.stringify(limiter.stats())) : guarded(req, res))
  } else if (MODE === 'static') {
    let inFlight = 0
    handler = (req, res) => {
      if (inFlight >= STATIC_LIMIT) return shed(res)
      inFlight++
      work(res, () => inFlight--)
    }
  } else if (MODE === 'overload-protection') {
    const protect = require('overload-protection')('http', { production: true, logging: false, clientRetrySecs: 1 })
    handler = (req, res) => {
      if (protect(req, res) === true) return
      work(res, () => {})
    }
  } else if (MODE === 'under-pressure') {
    // Fastify's own answer to overload, with the event-loop thresholds of its README's example (the memory ones
    // would shed for another reason); it answers 503 itself.
    const app = require('fastify')()
    app.register(require('@fastify/under-pressure'), { maxEventLoopDelay: 1000, maxEventLoopUtilization: 0.98 })
    app.get('/', (_req, reply) => work(reply.raw, () => {}))
    app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
    return
  } else {
    handler = (req, res) => work(res, () => {})
  }
  const inner = process.env.DIAG === '1' ? diagnosed(handler) : handler
  const server = http.createServer((req, res) =>
    req.url === '/__loop' ? res.end(JSON.stringify(loop)) : inner(req, res),
  )
  server.keepAliveTimeout = 60_000
  server.listen(Number(process.env.PORT), '127.0.0.1')
}
