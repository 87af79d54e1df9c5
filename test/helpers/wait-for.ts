// Waiting for another thread, process or socket to make something true: poll for the condition, never sleep for a
// guessed time. The time limit only stops a broken test; it is never what a test measures.

export interface WaitOptions {
  /** What is awaited, for the error message. */
  what?: string
  /** Give up after this many ms (default 10 000). */
  timeout?: number
  /** Poll every this many ms (default 10). */
  interval?: number
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>

/**
 * Calls `condition` until it returns a truthy value, and resolves with that value. Rejects, naming `what` and the
 * last value seen, when `timeout` ms pass first.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitOptions = {}): Promise<Truthy<T>> {
  const { what = 'condition', timeout = 10_000, interval = 10 } = options
  const giveUp = Date.now() + timeout
  for (;;) {
    const value = await condition()
    if (value) return value as Truthy<T>
    if (Date.now() > giveUp) {
      throw new Error(`${what} not reached within ${timeout} ms (last: ${JSON.stringify(value)})`)
    }
    await new Promise((resolve) => setTimeout(resolve, interval))
  }
}
