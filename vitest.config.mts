import { defineConfig } from 'vitest/config'

// Under PREBUILDS_ONLY (the release workflow's runners, Windows in ci.yml) the addon is a release binary, which
// carries none of the test-only natives (native/binding/test/) these files exercise.
const needTestNatives = [
  'test/cgroup-cpu.test.ts',
  'test/native-bad-input.test.ts',
  'test/shared/rolling-window.test.ts',
  'test/signals/cgroup-memory.test.ts',
]

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
          exclude: [
            'test/e2e/**',
            'test/demo/**',
            'test/reliability/**',
            'node_modules/**',
            ...(process.env.PREBUILDS_ONLY ? needTestNatives : []),
          ],
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
