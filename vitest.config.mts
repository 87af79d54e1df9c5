import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Each file in its own process: native state (the sampler, shared regions) never leaks between files.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    setupFiles: ['test/helpers/cleanup-regions.ts'],
    globalSetup: ['test/helpers/one-application.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/demo/**', 'test/reliability/**', 'node_modules/**'],
        },
      },
      {
        // Overload end-to-end tests measure latency under load: they run alone, one file at a time, after the rest.
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/demo/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
