import { defineConfig } from 'vitest/config'

import base from './vitest.config.mjs'

// The coverage run (npm run coverage, scripts/coverage/run.mjs): the unit project with V8 coverage of lib/, loading
// the gcov-instrumented addon that BULWARK_NATIVE names, less test/install/ (those install the packed tarball and
// check which binary it loads, not the code). The floors are checked by the script, not here.
const { projects, ...shared } = base.test as NonNullable<typeof base.test>
const unit = (projects as Array<{ test: { include: string[]; exclude: string[] } }>)[0].test

export default defineConfig({
  test: {
    ...shared,
    include: unit.include,
    // consumer-types type-checks the packed declarations with three TypeScript compilers in child processes: slow,
    // and it runs no code of lib/.
    exclude: [...unit.exclude, 'test/install/**', 'test/exports/consumer-types.test.ts'],
    // vitest ends its workers with SIGTERM, which skips the exit handlers that write the addon's gcov counts.
    setupFiles: [...(shared.setupFiles as string[]), 'test/helpers/exit-on-sigterm.ts'],
    coverage: {
      provider: 'v8',
      include: ['lib/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage/typescript',
    },
  },
})
