/** What an event subscription returns: call dispose() to stop listening. Works with `using` where supported. */
export interface Disposable {
  dispose(): void
}

const disposeSymbol: symbol | undefined = (Symbol as { dispose?: symbol }).dispose

/** A Disposable that runs `fn` once. */
export function toDisposable(fn: () => void): Disposable {
  let done = false
  const d: Disposable & Record<symbol, () => void> = {
    dispose() {
      if (done) return
      done = true
      fn()
    },
  }
  if (disposeSymbol) d[disposeSymbol] = d.dispose
  return d
}
