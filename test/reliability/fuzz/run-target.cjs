// Child-process entry of the fuzz suite: `node run-target.cjs <target>` runs every property of
// targets/<target>.cjs with fast-check and prints one JSON line per property ({ name, runs, ok, failure? }).
// Exit code 0 only when all passed; a native abort shows as a signal, an endless loop as a timeout in the parent.
'use strict'
const path = require('path')
const fc = require('fast-check')

async function main() {
  const target = process.argv[2]
  // A fixed seed by default, so that a commit's CI result can be reproduced; FUZZ_SEED=random explores new cases
  // (each report line carries the seed to replay it with).
  const given = process.env.FUZZ_SEED
  const seed = given === 'random' ? Date.now() % 2 ** 31 : Number(given || 20_260_101)
  const scale = Number(process.env.FUZZ_SCALE || 1)
  const properties = require(path.join(__dirname, 'targets', `${target}.cjs`))
  let failed = 0
  // Keeps the process alive while properties run: a promise that never settles must show as a timeout, not as an
  // early exit with properties missing from the report.
  const keepAlive = setInterval(() => undefined, 1000)
  for (const { name, runs, property, after } of properties) {
    const numRuns = Math.max(1, Math.round(runs * scale))
    const started = Date.now()
    let failure
    try {
      await fc.assert(property, { numRuns, seed, endOnFailure: false, verbose: 0 })
    } catch (error) {
      const cause = error && error.cause
      const why = cause && cause.stack ? cause.stack.split('\n').slice(0, 5).join('\n') : String(cause)
      const message = String(error && error.message).replace(/^(Counterexample: .{0,600}).*$/m, '$1...')
      failure = `cause: ${why.slice(0, 1000)}\n${message.slice(0, 2000)}`
      failed++
    }
    if (after) await after()
    process.stdout.write(
      `${JSON.stringify({ target, name, runs: numRuns, seed, ms: Date.now() - started, ok: !failure, failure })}\n`,
    )
  }
  clearInterval(keepAlive)
  process.stdout.write(`${JSON.stringify({ target, done: true, failed })}\n`)
  process.exitCode = failed === 0 ? 0 : 1
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack}\n`)
  process.exitCode = 2
})
