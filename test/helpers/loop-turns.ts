// "Nothing more happened" without a guessed sleep. Once the event that starts some work has been awaited (a late
// answer given, a handler settled, a connection gone), whatever that work does next in this process is callbacks
// already queued: microtasks, nextTicks, immediates, and a handle's close callback (a socket's or a stream's
// 'close', hence a response's). Going round the event loop runs all of them, however busy the machine, where a
// 20 ms sleep may end before a slow machine got to them and pass whether they happened or not.

/**
 * Resolves after the event loop has gone round `turns` times (through poll, check and close callbacks): every
 * callback queued before the call, and those they queue in turn within that many rounds, has run. Timers and I/O
 * that has not arrived yet are not waited for: await the event that starts the work first.
 */
export async function loopTurns(turns = 2): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
}
