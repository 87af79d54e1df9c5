// The demo's live table, redrawn every second: what the clients are answered, read from the workers, and what the
// limiter, the breaker and the hot-key sketch are doing, read from their shared memory the way `bulwark top` does
// (this process never joins the regions). Every figure per second is a rate over the last second; the frame drawn
// when a run ends gives the averages over the whole run instead (a rate over the moment since the last frame would
// mean nothing), and says so.
'use strict'
const { preciseNow } = require('../../dist/cjs')
const { HostWatcher } = require('../../dist/cjs/entries/top')

const n = (x) => Math.round(x).toLocaleString('en-US')
const pct = (x) => `${Math.round(100 * x)} %`

class LiveView {
  constructor(host, out, now = preciseNow) {
    this.host = host
    this.out = out
    this.now = now
    this.tty = Boolean(out.isTTY)
    const watch = { names: [host.name], keys: 4 }
    this.watcher = new HostWatcher(watch, now) // rates over the last second
    this.runWatcher = new HostWatcher(watch, now) // rates over the whole run, for its last frame
    this.drawn = 0
  }

  start(phase) {
    this.phase = phase
    this.first = this.last = { at: this.now(), totals: this.host.totals() }
    this.watcher.sample()
    this.runWatcher.sample()
    this.timer = setInterval(() => this.draw(), 1000)
  }

  stop() {
    clearInterval(this.timer)
    this.draw(true)
    if (this.tty) this.out.write('\n')
    this.drawn = 0
  }

  draw(final = false) {
    const lines = this.lines(final)
    if (this.tty) {
      // Back to the top of the previous drawing, then over it.
      this.out.write(`${this.drawn > 0 ? `\u001b[${this.drawn}F\u001b[J` : ''}${lines.join('\n')}\n`)
      this.drawn = lines.length
    } else {
      this.out.write(`${lines.join('\n')}\n\n`)
    }
  }

  lines(final) {
    const now = this.now()
    const totals = this.host.totals()
    const before = final ? this.first : this.last
    this.last = { at: now, totals }
    const seconds = (now - before.at) / 1000 || 1
    const rate = (k) => (totals[k] - before.totals[k]) / seconds
    const lookups = totals.lookups - before.totals.lookups
    const hits = totals.cacheHits - before.totals.cacheHits
    const p = this.phase
    const surge = (now - p.surgeAt) / 1000
    const failing = now >= p.failFrom && now < p.failTo
    const watcher = final ? this.runWatcher : this.watcher
    const byKind = Object.fromEntries(watcher.sample().regions.map((r) => [r.kind, r.view]))
    const title = p.protect ? 'WITH bulwark' : 'WITHOUT protection'
    const when = final
      ? `run over: ${p.warm} s of ordinary traffic, then a ${p.seconds.toFixed(0)} s surge at ${n(p.rate)} req/s`
      : surge < 0
        ? 'ordinary traffic'
        : `surge ${Math.min(surge, p.seconds).toFixed(0)} s of ${p.seconds.toFixed(0)}, offered ${n(p.rate)} req/s`
    const answers = `200 ${n(rate('ok'))} · 503 shed ${n(rate('shed'))} · 503 breaker ${n(rate('broken'))} · 502 failed ${n(rate('failed'))}`
    const lines = final
      ? [`${title} · ${when} · per second, averaged over the ${seconds.toFixed(0)} s run:`, `  answers/s  ${answers}`]
      : [`${title} · ${when} · downstream ${failing ? 'FAILING' : 'healthy'}`, `  answers/s  ${answers}`]
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
        `  breaker    ${b.state} · drops ${pct(b.dropProbability)} of calls · ${n(b.calls)} calls in window, ${pct(b.calls ? b.accepts / b.calls : 1)} succeeded`,
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
