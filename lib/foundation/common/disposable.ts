/** What an event subscription returns: call dispose() (or leave a `using` block) to stop listening. */
export interface Disposable {
  dispose(): void
  [Symbol.dispose](): void
}

/** A Disposable that runs `fn` once. */
export function toDisposable(fn: () => void): Disposable {
  let done = false
  const dispose = (): void => {
    if (done) return
    done = true
    fn()
  }
  return { dispose, [Symbol.dispose]: dispose }
}
