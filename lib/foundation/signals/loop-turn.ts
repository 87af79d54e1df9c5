// How long this thread's event loop has been in its current turn: the sampler's hooks store when the loop last
// entered poll (native/core/sampler/sampler.h, kLoopPollAt), so a new value there means a new turn.
import { preciseNow } from './clock'
import { cell, loopCell, signalCells } from './signal-cells'

const pollAtIndex = loopCell >= 0 ? loopCell + cell.loopPollAt : -1

/** Whether this thread's loop is measured (a worker thread without a loop slot is not). */
export const loopTurnsMeasured = pollAtIndex >= 0

let turn = -1
let turnStart = 0

/**
 * Ms since the first call of the current loop turn (0 for that call). Callers ask it for each request they decide,
 * so it is how long the requests of this turn decided earlier took: a request decided now waited at least that
 * long after the loop read it from its socket (docs/rules/bbr.md, "turn age"). A lower bound: time the loop spent
 * before the first call, and the request's wait in the kernel during the previous turn, are not counted.
 */
export function loopTurnAge(): number {
  const now = preciseNow()
  const at = signalCells[pollAtIndex]
  if (at !== turn) {
    turn = at
    turnStart = now
    return 0
  }
  return now - turnStart
}
