'use strict'
// One measurement of what loading a module costs, in a fresh process (bench/import-cost.bench.mjs starts one per
// run): files loaded, wall time, and the resident memory it adds. Prints one line of JSON.
//   node --expose-gc import-probe.cjs <specifier> <how>
// how: 'require'; 'import' (the ES module entry); 'touch:<Name>' (require, then read that export);
// 'touch:*' (require, then read every export, which loads whatever the entry defers).
const { performance } = require('perf_hooks')

const [specifier, how = 'require'] = process.argv.slice(2)

async function load() {
  if (how === 'import') return import(specifier)
  const loaded = require(specifier)
  if (how === 'touch:*') for (const name of Object.keys(loaded)) void loaded[name]
  else if (how.startsWith('touch:')) void loaded[how.slice('touch:'.length)]
  return loaded
}

async function main() {
  global.gc?.()
  const before = Object.keys(require.cache).length
  const rss = process.memoryUsage().rss
  const start = performance.now()
  await load()
  const ms = performance.now() - start
  const addedRss = process.memoryUsage().rss - rss
  // An ES module entry is not in require.cache: count it, and the CommonJS files it reaches are counted there.
  const files = Object.keys(require.cache).length - before + (how === 'import' ? 1 : 0)
  process.stdout.write(`${JSON.stringify({ files, ms, rssMB: addedRss / 2 ** 20 })}\n`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
