import { AsyncLocalStorage } from 'async_hooks'

// The deadline (Date.now() milliseconds) of the inbound request whose handler is running, for the outbound guards.
// Made on first use: an application that never propagates a deadline never creates an AsyncLocalStorage.
let store: AsyncLocalStorage<number> | undefined

/** Runs `fn(...args)` with `deadline` (Date.now() ms) as the current request's deadline. */
export function runWithDeadline<A extends unknown[], R>(deadline: number, fn: (...args: A) => R, ...args: A): R {
  store ??= new AsyncLocalStorage<number>()
  return store.run(deadline, fn, ...args)
}

/** Makes `deadline` (NaN: none) current for the rest of this synchronous run and what it starts (Fastify's hooks). */
export function enterDeadline(deadline: number): void {
  store ??= new AsyncLocalStorage<number>()
  store.enterWith(deadline)
}

/**
 * Milliseconds left before the current inbound request's deadline (negative once it passed), or undefined outside
 * a request that carries one (docs/guide/degrade.md, "Deadlines").
 */
export function remainingDeadlineMs(): number | undefined {
  const deadline = store?.getStore()
  return deadline === undefined || deadline !== deadline ? undefined : deadline - Date.now() // NaN: none
}
