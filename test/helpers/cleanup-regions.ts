// After each test file: remove the shared regions this file created (their names carry this process's pid, see
// unique-name.ts) that no live process uses any more: tests SIGKILL members on purpose, and a killed last member
// cannot remove the name itself. Regions of other test files, running at the same time, are never touched.
import { afterAll } from 'vitest'

import { removeStaleRegions } from '../../lib/shared/regions'

afterAll(() => {
  removeStaleRegions((name) => name.includes(`-${process.pid}-`))
})
