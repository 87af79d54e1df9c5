import { cell, loopCell, signalCells } from '../../foundation/signals/signal-cells'
import { loopTurnAge, loopTurnsMeasured } from '../../foundation/signals/loop-turn'
import { eventLoopDelayRaw } from '../../foundation/signals/signals'
import type { LoadSignal } from './load-signal'
import { QueueDelayController, type QueueDelayOptions } from './queue-delay-controller'

/** When the sampler last measured this thread's loop. */
const loopTickAt = () => (loopCell >= 0 ? signalCells[loopCell + cell.loopTickAt] : 0)
/** The loop was idle less than 5 % of the last tick: it did not catch up. */
const loopSaturated = () => loopCell >= 0 && signalCells[loopCell + cell.loopEluRaw] >= 950
/** How long one of the sampler's loop measurements spans while the loop is busy, ms. */
const tickSpan = () => signalCells[cell.loopInterval]

/**
 * True while an admission queue's waiter asks its limiter again (limiter-queue.ts). The turn budget keeps the wait
 * of requests still unread in the kernel short; a waiter was read long ago and has waited already, so the age of
 * the turn that frees its slot does not count against it (a budget that refused it would leave the slot to a later
 * arrival and the waiter to time out). Per thread, as the loop turn is: the retry is synchronous.
 */
let waiterAsking = false

/** Marks the start (true) and end (false) of a waiter's retry. */
export function setWaiterAsking(asking: boolean): void {
  waiterAsking = asking
}

/** The turn's age as the budget reads it: 0 for a waiter's retry. */
const budgetedAge =
  (age: () => number): (() => number) =>
  () =>
    waiterAsking ? 0 : age()

/** What the queueing-delay check needs from its limiter. */
export interface QueueDelayCheckHost {
  /** Load in permille at or above which the limiter counts as saturated. */
  threshold: number
  /** The requests' smallest mean response time, ms. */
  serviceTime: () => number
  /** Told each new admit fraction. */
  onFraction: (fraction: number) => void
  /** Whether the limiter had a request in flight at any moment since `since` (its clock). */
  requestsSince: (since: number) => boolean
}

/**
 * The queueing-delay check for a load signal. A function signal replaces every measured input, the queueing delay
 * included (no check); { load, delay } injects both (the loop then counts as saturated while the injected load is
 * at or over the threshold); a measured signal reads this thread's loop. Either way the target is never below 0.75
 * of the requests' service time (queue-delay-controller.ts, SERVICE_TIME_SHARE).
 */
export function queueDelayCheck(
  options: QueueDelayOptions,
  signal: LoadSignal,
  host: QueueDelayCheckHost,
): QueueDelayController | undefined {
  if (typeof signal === 'function') return undefined
  if (typeof signal === 'object') {
    const delay = signal.delay
    if (delay === undefined) return undefined
    const load = signal.load
    const saturated = () => load() >= host.threshold
    return new QueueDelayController(options, {
      delay,
      saturated,
      serviceTime: host.serviceTime,
      onFraction: host.onFraction,
      requestsSince: host.requestsSince,
      turnAge: signal.turnAge === undefined ? undefined : budgetedAge(signal.turnAge),
    })
  }
  return new QueueDelayController(options, {
    delay: eventLoopDelayRaw,
    saturated: loopSaturated,
    measuredAt: loopTickAt,
    span: tickSpan,
    serviceTime: host.serviceTime,
    onFraction: host.onFraction,
    requestsSince: host.requestsSince,
    turnAge: loopTurnsMeasured ? budgetedAge(loopTurnAge) : undefined,
  })
}
