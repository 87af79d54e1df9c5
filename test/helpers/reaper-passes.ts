import { waitFor } from './wait-for'

/**
 * Resolves once this process's sampler thread has made at least `n` complete reaper passes that started after the
 * call. The sampler reaps the dead members of every region this process has open every 200 ms (with the leases) and
 * samples the CPU every 500 ms, so `n + 1` new CPU samples mean at least `n` whole passes. Tests of "a dead member's share is given back" wait for this instead of
 * a wall-clock bound. `loadInfo` is bulwark's, from whichever build the test loads (lib/ or dist/cjs).
 */
export async function reaperPasses(loadInfo: () => { samples: number }, n = 1): Promise<void> {
  const start = loadInfo().samples
  await waitFor(() => loadInfo().samples >= start + n + 1, { what: `${n} reaper passes`, timeout: 30_000 })
}
