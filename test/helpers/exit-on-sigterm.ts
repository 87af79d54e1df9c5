// The coverage run only (vitest.coverage.config.mts): vitest ends each worker with SIGTERM, whose default action
// skips the process's exit handlers, among them the one that writes the instrumented addon's gcov counts. Exiting
// on the signal instead runs them.
process.once('SIGTERM', () => process.exit(0))
