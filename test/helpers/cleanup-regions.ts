// After each test file: remove the shared regions this file created (their names carry this process's pid, see
// unique-name.ts) that no live process uses any more: tests SIGKILL members on purpose, and a killed last member
// cannot remove the name itself. Regions of other test files, running at the same time, are never touched.
import { afterAll } from 'vitest'

import { listRegions, removeStaleRegions } from '../../lib/foundation/regions/regions'
import { waitFor } from './wait-for'

const mine = (name: string) => name.includes(`-${process.pid}-`)

afterAll(async () => {
  // A child killed in an afterEach may still be dying: try again until its region is stale. A region still in use
  // after 2 s belongs to a process that outlived its test; cleaning up is not the place to fail for it.
  await waitFor(
    () => {
      removeStaleRegions(mine)
      return !listRegions().some(mine)
    },
    { timeout: 2000, interval: 100 },
  ).catch(() => undefined)
})
