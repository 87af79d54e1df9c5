import { afterEach } from 'vitest'

/**
 * For a test file: `keep(thing)` returns `thing` and closes it after the test, the last kept first (a component
 * before the source or region it reads from).
 */
export function closeAfterEach(): <T extends { close(): void }>(thing: T) => T {
  const closing: Array<{ close(): void }> = []
  afterEach(() =>
    closing
      .splice(0)
      .reverse()
      .forEach((c) => c.close()),
  )
  return (thing) => (closing.push(thing), thing)
}
