#!/usr/bin/env node
// The `bulwark` command (package.json "bin"): npx bulwark top.

// Loaded inside the promise so that a native addon that cannot load is reported as its message, not a stack trace.
Promise.resolve()
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  .then(() => (require('./main') as typeof import('./main')).main(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      process.stderr.write(`bulwark: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exitCode = 1
    },
  )
