// Contenders for the I/O-bound scenarios: the two latency-driven limits of Netflix's concurrency-limits (Java), as
// its documentation describes them, with its published defaults, updated on every response as its simple limiter
// does. Written for this benchmark from the algorithms' descriptions (Netflix publishes no Node.js version).
//  - gradient2: gradient = clamp(longRtt / shortRtt, 0.5, 1); limit = limit * gradient + queueSize, smoothed
//    (0.2); longRtt an exponential average over 600 samples, nudged down when it runs far over the short one.
//  - vegas: queue = limit * (1 - rttNoLoad / rtt); grow by beta when there is no queue, by log10(limit) under
//    alpha, shrink by log10(limit) over beta; rttNoLoad the minimum, taken afresh every 15-30 x limit samples.
// A request is refused when the requests in flight have reached the limit.
'use strict'

const log10 = (limit) => Math.max(0, Math.floor(Math.log10(Math.max(1, limit))))

class Gradient2 {
  constructor() {
    this.limit = 20 // initial limit, and the minimum
    this.minLimit = 20
    this.maxLimit = 200
    this.smoothing = 0.2
    this.queueSize = 4
    this.longWindow = 600
    this.warmup = 10
    this.samples = 0
    this.longRtt = 0
  }

  update(rtt, inFlight) {
    // The long average is a plain mean over its warm-up samples, then exponential.
    this.samples++
    if (this.samples <= this.warmup) this.longRtt += (rtt - this.longRtt) / this.samples
    else this.longRtt += (rtt - this.longRtt) * (2 / (this.longWindow + 1))
    if (this.longRtt / rtt > 2) this.longRtt *= 0.9 // latency back to normal after a long overload
    if (inFlight < this.limit / 2) return // application-limited: do not grow
    const gradient = Math.max(0.5, Math.min(1, this.longRtt / rtt))
    const next = this.limit * gradient + this.queueSize
    this.limit = Math.max(
      this.minLimit,
      Math.min(this.maxLimit, this.limit * (1 - this.smoothing) + next * this.smoothing),
    )
  }
}

class Vegas {
  constructor() {
    this.limit = 20
    this.maxLimit = 1000
    this.rttNoLoad = 0
    this.probeMultiplier = 30
    this.count = 0
    this.jitter = 0.5 + Math.random() / 2
  }

  update(rtt, inFlight) {
    this.count++
    if (this.jitter * this.probeMultiplier * this.limit <= this.count) {
      this.jitter = 0.5 + Math.random() / 2
      this.count = 0
      this.rttNoLoad = rtt // a fresh no-load sample
      return
    }
    if (this.rttNoLoad === 0 || rtt < this.rttNoLoad) {
      this.rttNoLoad = rtt
      return
    }
    if (2 * inFlight < this.limit) return
    const queue = Math.ceil(this.limit * (1 - this.rttNoLoad / rtt))
    const step = log10(this.limit)
    let next = this.limit
    if (queue <= step) next += 6 * step
    else if (queue < 3 * step) next += step
    else if (queue > 6 * step) next -= step
    this.limit = Math.max(1, Math.min(this.maxLimit, next))
  }
}

/** A limiter with the named algorithm: tryAcquire() -> start time or -1; release(start) on a response. */
function netflixLimiter(algorithm) {
  const limit = algorithm === 'gradient2' ? new Gradient2() : new Vegas()
  let inFlight = 0
  return {
    tryAcquire() {
      if (inFlight >= Math.floor(limit.limit)) return -1
      inFlight++
      return performance.now()
    },
    release(start, measured) {
      inFlight--
      if (measured) limit.update(performance.now() - start, inFlight + 1)
    },
    stats: () => ({ limit: limit.limit, inFlight }),
  }
}

module.exports = { netflixLimiter }
