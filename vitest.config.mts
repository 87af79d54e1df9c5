import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**', 'node_modules/**'],
    // Each file in its own process: native state (the sampler, shared regions) never leaks between files.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
