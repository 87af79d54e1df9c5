'use strict'
// One measurement of what loading a module costs, in a fresh process (bench/import-cost.bench.mjs starts one per
// run): files loaded, wall time, the CPU time of the process (every thread: on a busy machine it moves far less
// than wall time), and the resident memory it adds. Prints one line of JSON. It loads nothing of its own before
// measuring (not even perf_hooks: a library that needs it pays for it here).
//   node --expose-gc import-probe.cjs <specifier> <how>
// how: 'require'; 'import' (the ES module entry); 'use:bbr' (one BbrLimiter made and asked once); 'use:core' and
// 'import:use' (see useCore); 'use:peer' (see usePeer).
const fs = require('fs')

const [specifier, how = 'require'] = process.argv.slice(2)

// 'use:core': what a gateway's start does with the core: one of each core component made and asked once.
function useCore(b) {
  new b.BbrLimiter().tryAcquire()
  new b.CircuitBreaker({ strategy: 'errorRatio', failureRatio: 0.5 }).tryAcquire()
  new b.SreBreaker().tryAcquire()
  new b.TokenBucket({ rate: 100, capacity: 100 }).tryAcquire()
}

// 'use:peer': a peer's counterparts of useCore, each made and used once (the bench compares the two).
function usePeer(name, peer) {
  if (name === 'cockatiel') {
    const breaker = peer.circuitBreaker(peer.handleAll, {
      halfOpenAfter: 1000,
      breaker: new peer.SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
    })
    return Promise.all([peer.bulkhead(10).execute(() => 1), breaker.execute(() => 1)])
  }
  if (name === 'rate-limiter-flexible') return new peer.RateLimiterMemory({ points: 100, duration: 1 }).consume('k')
  if (name === 'opossum') return new peer(async () => 1).fire()
  throw new Error(`no use defined for ${name}`)
}

async function load() {
  if (how === 'import') return import(specifier)
  if (how === 'import:use') return useCore(await import(specifier))
  const loaded = require(specifier)
  if (how === 'use:core') useCore(loaded)
  else if (how === 'use:bbr') new loaded.BbrLimiter().tryAcquire()
  else if (how === 'use:peer') await usePeer(specifier, loaded)
  return loaded
}

// RSS also counts pages of node's own binary (V8's compiler, the module loader) that a process touches for the
// first time: they are shared by every process that runs node and held once by the page cache. The memory a worker
// really adds is its private pages (Linux: /proc/self/smaps_rollup, Private_Clean + Private_Dirty); null elsewhere.
function privateMB() {
  try {
    const rollup = fs.readFileSync('/proc/self/smaps_rollup', 'utf8')
    const kB = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)[1])
    return (kB('Private_Clean') + kB('Private_Dirty')) / 1024
  } catch {
    return null
  }
}

async function main() {
  // An application that imports bulwark as an ES module runs Node's ES module loader already: start it first, so
  // that the import rows count what bulwark adds, not the loader's own start.
  if (how.startsWith('import')) await import('data:text/javascript,export default 1')
  global.gc?.()
  const before = Object.keys(require.cache).length
  const rss = process.memoryUsage().rss
  const privateBefore = privateMB()
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  await load()
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  const { user, system } = process.cpuUsage(cpu)
  const addedRss = process.memoryUsage().rss - rss
  const privateAfter = privateMB()
  // An ES module entry is not in require.cache: count it, and the CommonJS files it reaches are counted there.
  const added = Object.keys(require.cache).slice(before)
  const files = added.length + (how === 'import' ? 1 : 0)
  // The JavaScript V8 had to parse (the addon excluded): what most of the time goes to.
  const jsKB = added
    .filter((f) => f.endsWith('.js') || f.endsWith('.cjs'))
    .reduce((kB, f) => kB + fs.statSync(f).size / 1024, 0)
  process.stdout.write(
    `${JSON.stringify({
      files,
      jsKB,
      ms,
      cpuMs: (user + system) / 1000,
      rssMB: addedRss / 2 ** 20,
      privateMB: privateAfter === null ? null : privateAfter - privateBefore,
    })}\n`,
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
