import { waitFor } from './wait-for'

/**
 * Resolves once this process's sampler thread has made `n` complete reaper passes that started after the call.
 * The sampler reaps the dead members of every region this process has open right after each CPU sample, so
 * `n + 1` new samples mean `n` whole passes. Tests of "a dead member's share is given back" wait for this instead of
 * a wall-clock bound. `loadInfo` is bulwark's, from whichever build the test loads (lib/ or dist/cjs).
 */
export async function reaperPasses(loadInfo: () => { samples: number }, n = 1): Promise<void> {
  const start = loadInfo().samples
  await waitFor(() => loadInfo().samples >= start + n + 1, { what: `${n} reaper passes`, timeout: 30_000 })
}
