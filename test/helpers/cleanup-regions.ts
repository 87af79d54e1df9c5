// After each test file: remove the shared regions this file created (their names carry this process's pid, see
// unique-name.ts) that no live process uses any more: tests SIGKILL members on purpose, and a killed last member
// cannot remove the name itself. Regions of other test files, running at the same time, are never touched.
import { afterAll } from 'vitest'

import { listRegions, removeStaleRegions } from '../../lib/shared/regions'

const mine = (name: string) => name.includes(`-${process.pid}-`)

afterAll(async () => {
  // A child killed in an afterEach may still be dying: give the kernel a moment before calling its region stale.
  for (let attempt = 0; attempt < 20; attempt++) {
    removeStaleRegions(mine)
    if (!listRegions().some(mine)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
})
