// Side-by-side timing that a busy machine does not skew: cases run in interleaved rounds (every case once per round,
// in a rotating order), each round timed in CPU time of this process (a wait for a core is no one's cost), and a
// case's figure is its median round. Ratios between cases of one run are what to read.
//
// Each case gets its own loop function (compiled from source, as mitata does), so that the loop's call site sees
// one function only and V8 optimises each case as a caller would. Each loop's source is its own (a numbered comment):
// V8 caches what `new Function` compiles by its source text, and the closures of one cached compilation share their
// feedback, which would make every loop's call site see every case.

const cpuNs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1000
}

// Between timed runs the event loop gets a turn, as a server's loop does between requests: a benchmark that never
// left its first turn would run every case inside one turn minutes long, which the queueing-delay rule's turn budget
// rightly sheds (docs/rules/bbr.md).
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

let compiledLoops = 0

function syncLoop() {
  return new Function('fn', 'n', `// loop ${compiledLoops++}\nfor (let i = 0; i < n; i++) fn()`)
}

function asyncLoop() {
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor
  return new AsyncFunction('fn', 'n', `// loop ${compiledLoops++}\nfor (let i = 0; i < n; i++) await fn()`)
}

/**
 * cases: [{ name, fn }] (fn may return a promise: it is then awaited, as a caller would). Runs `rounds` rounds of
 * about `roundMs` of CPU time per case. Returns Map name -> { ns (median of rounds), min, max, rounds (ns per call in
 * each round, in round order: cases of one round ran within a fraction of a second of each other) }.
 */
export async function interleaved(cases, { rounds = 15, roundMs = 20 } = {}) {
  const prepared = []
  for (const c of cases) {
    await nextTurn()
    const isAsync = c.fn() instanceof Promise
    if (isAsync) await c.fn()
    const loop = isAsync ? asyncLoop() : syncLoop()
    // Warm up, then size a round to about roundMs.
    let n = 1000
    for (;;) {
      const started = cpuNs()
      await loop(c.fn, n)
      const spent = cpuNs() - started
      await nextTurn()
      if (spent > 5e6 || n >= 1 << 26) {
        n = Math.max(1000, Math.round((n * roundMs * 1e6) / spent))
        break
      }
      n *= 4
    }
    prepared.push({ name: c.name, fn: c.fn, loop, n, samples: [] })
  }
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < prepared.length; j++) {
      const p = prepared[(j + round) % prepared.length]
      const started = cpuNs()
      await p.loop(p.fn, p.n)
      p.samples.push((cpuNs() - started) / p.n)
      await nextTurn()
    }
  }
  const out = new Map()
  for (const p of prepared) {
    const s = [...p.samples].sort((a, b) => a - b)
    out.set(p.name, { ns: s[s.length >> 1], min: s[0], max: s[s.length - 1], rounds: p.samples })
  }
  return out
}
