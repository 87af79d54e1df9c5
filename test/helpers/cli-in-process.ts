// Runs the `bulwark` command line in this process (lib/ops/cli/main.ts), for tests of its own paths: what it wrote to
// stdout and stderr is caught, not printed.
import { vi } from 'vitest'

import { main } from '../../lib/ops/cli/main'

/** Runs `bulwark <args>` here: its exit code and what it wrote to stdout and stderr. */
export async function bulwarkHere(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true))
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true))
  try {
    return { code: await main(args), out, err }
  } finally {
    stdout.mockRestore()
    stderr.mockRestore()
  }
}
