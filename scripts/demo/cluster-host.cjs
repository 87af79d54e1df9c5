// The demo's node:cluster: starts the workers on one port, switches their mode, adds up what they answered.
'use strict'
const cluster = require('cluster')
const http = require('http')
const path = require('path')

function freePort() {
  return new Promise((resolve) => {
    const probe = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

class ClusterHost {
  constructor(workers, name) {
    this.count = workers
    this.name = name
    this.workers = []
    this.latest = new Map() // worker id -> its last counts
  }

  async start() {
    this.port = await freePort()
    cluster.setupPrimary({ exec: path.join(__dirname, 'worker.cjs') })
    const env = { BULWARK_DEMO_NAME: this.name, BULWARK_DEMO_PORT: String(this.port) }
    const listening = []
    for (let i = 0; i < this.count; i++) {
      const worker = cluster.fork(env)
      worker.on('message', (m) => {
        if (m.op === 'counts') this.latest.set(worker.id, m.counts)
      })
      this.workers.push(worker)
      listening.push(new Promise((resolve) => worker.once('listening', resolve)))
    }
    await Promise.all(listening)
  }

  /** Protection on or off, and when (host monotonic ms) the downstream fails. Resolves once every worker has it. */
  setMode(protect, failFrom = Infinity, failTo = Infinity) {
    return this.ask({ op: 'mode', protect, failFrom, failTo })
  }

  /** Resolves once every worker has reported its counts as they are now (they also report every half second). */
  refresh() {
    return this.ask({ op: 'report' })
  }

  ask(message) {
    return Promise.all(
      this.workers.map(
        (w) =>
          new Promise((resolve) => {
            const onMessage = (m) => {
              if (m.op !== 'done') return
              w.off('message', onMessage)
              this.latest.set(w.id, m.counts)
              resolve()
            }
            w.on('message', onMessage)
            w.send(message)
          }),
      ),
    )
  }

  /** What every worker answered so far, added up. */
  totals() {
    const sum = { ok: 0, shed: 0, broken: 0, failed: 0, cacheHits: 0, lookups: 0 }
    for (const counts of this.latest.values()) for (const k of Object.keys(sum)) sum[k] += counts[k]
    return sum
  }

  /** Workers detach from the shared regions and exit. */
  stop() {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        for (const w of this.workers) w.process.kill('SIGKILL')
        resolve()
      }, 5000)
      cluster.disconnect(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

module.exports = { ClusterHost }
