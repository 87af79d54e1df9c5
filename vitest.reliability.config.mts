import { defineConfig } from 'vitest/config'

// The reliability suite (npm run test:reliability): fuzzing, sanitizers, faults and Redis failures. Slow and
// machine-heavy, so it runs apart from `npm test`, one file at a time.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['test/helpers/one-application.ts'],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
})
