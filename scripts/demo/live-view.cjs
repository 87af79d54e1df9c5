// The demo's live table, redrawn every second: what the clients are answered, read from the workers, and what the
// limiter, the breaker and the hot-key sketch are doing, read from their shared memory the way `bulwark top` does
// (this process never joins the regions).
'use strict'
const { HostWatcher, preciseNow } = require('../../dist/cjs')

const n = (x) => Math.round(x).toLocaleString('en-US')
const pct = (x) => `${Math.round(100 * x)} %`

class LiveView {
  constructor(host, out) {
    this.host = host
    this.out = out
    this.tty = Boolean(out.isTTY)
    this.watcher = new HostWatcher({ names: [host.name], keys: 4 })
    this.drawn = 0
  }

  start(phase) {
    this.phase = phase
    this.last = { at: preciseNow(), totals: this.host.totals() }
    this.watcher.sample()
    this.timer = setInterval(() => this.draw(), 1000)
  }

  stop() {
    clearInterval(this.timer)
    this.draw()
    if (this.tty) this.out.write('\n')
    this.drawn = 0
  }

  draw() {
    const lines = this.lines()
    if (this.tty) {
      // Back to the top of the previous drawing, then over it.
      this.out.write(`${this.drawn > 0 ? `\u001b[${this.drawn}F\u001b[J` : ''}${lines.join('\n')}\n`)
      this.drawn = lines.length
    } else {
      this.out.write(`${lines.join('\n')}\n\n`)
    }
  }

  lines() {
    const now = preciseNow()
    const totals = this.host.totals()
    const before = this.last
    this.last = { at: now, totals }
    const seconds = (now - before.at) / 1000 || 1
    const rate = (k) => (totals[k] - before.totals[k]) / seconds
    const lookups = totals.lookups - before.totals.lookups
    const hits = totals.cacheHits - before.totals.cacheHits
    const p = this.phase
    const surge = (now - p.surgeAt) / 1000
    const failing = now >= p.failFrom && now < p.failTo
    const byKind = Object.fromEntries(this.watcher.sample().regions.map((r) => [r.kind, r.view]))
    const title = p.protect ? 'WITH bulwark' : 'WITHOUT protection'
    const when =
      surge < 0
        ? 'ordinary traffic'
        : `surge ${Math.min(surge, p.seconds).toFixed(0)} s of ${p.seconds.toFixed(0)}, offered ${n(p.rate)} req/s`
    const lines = [
      `${title} · ${when} · downstream ${failing ? 'FAILING' : 'healthy'}`,
      `  answers/s  200 ${n(rate('ok'))} · 503 shed ${n(rate('shed'))} · 503 breaker ${n(rate('broken'))} · 502 failed ${n(rate('failed'))}`,
    ]
    if (!p.protect) {
      lines.push(
        '  limiter    off: every request is taken, and waits its turn',
        '  breaker    off: every call waits for the downstream',
        '  cache      off: every lookup is slow',
      )
      return lines
    }
    const l = byKind.bbr
    if (l) {
      const r = l.rates ?? { admitted: 0, shed: 0, shedInFlight: 0, shedQueueDelay: 0 }
      lines.push(
        `  limiter    load ${pct(l.load / 1000)} · in flight ${n(l.inFlight)} / ${n(l.maxInFlight)} · admitted ${n(r.admitted)}/s · shed ${n(r.shed)}/s (in-flight ${n(r.shedInFlight)} + delay ${n(r.shedQueueDelay)})`,
      )
    }
    const b = byKind.sre
    if (b)
      lines.push(
        `  breaker    ${b.state} · drops ${pct(b.dropProbability)} of calls · ${n(b.total)} calls in window, ${pct(b.total ? b.accepts / b.total : 1)} succeeded`,
      )
    const h = byKind.heavykeeper
    if (h)
      lines.push(
        `  cache      ${pct(lookups ? hits / lookups : 0)} of lookups served from memory · hot: ${h.keys.map((k) => `${k.key} ${n(k.count)}`).join(' · ')}`,
      )
    return lines
  }
}

module.exports = { LiveView }
