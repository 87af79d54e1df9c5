import { describeValue } from '../../../foundation/errors/describe-value'
import { RedisError } from '../../../foundation/errors/redis-error'
import type { Clock } from '../../../foundation/signals/clock'
import { clientFailure } from './client-failure'
import { type RedisPort, isNoScript } from './clients/redis-port'
import { clusterSlot } from './cluster-slot'
import type { PendingDecision } from './pending-decision'

/** The most decisions one script call carries: a few µs of Redis each, and several calls in flight keep Redis and the client both busy. */
export const MAX_BATCH = 64

/** Where a script call's outcome goes. */
export interface BatchSink {
  /** Redis decided `call`: `remaining` permits left, `waitUs` 0 when admitted; the call went out at `sentAt`. */
  decided(call: PendingDecision, remaining: number, waitUs: number, sentAt: number): void
  /** Every decision of a script call has been answered. */
  answered(): void
  /** The script call carrying `calls` failed (an error, or a reply that is not the script's). */
  failed(calls: readonly PendingDecision[], error: RedisError): void
}

/** The decisions of one script call: KEYS and ARGV as the scripts take them (redis-scripts.ts). */
class ScriptCall {
  readonly decisions: PendingDecision[] = []
  readonly keys: string[] = []
  readonly args: string[]
  sentAt = 0
  /** Set after one NOSCRIPT: the retry carries the script itself. */
  resent = false

  constructor(
    private readonly batcher: ScriptBatcher,
    params: readonly [string, string],
  ) {
    this.args = [params[0], params[1], '']
  }

  readonly onReply = (reply: unknown): void => this.batcher.reply(this, reply)
  readonly onError = (error: unknown): void => this.batcher.error(this, error)
}

/**
 * Gathers the decisions made in one turn of the event loop into script calls (one per hash slot on a cluster, at
 * most MAX_BATCH each) and sends them when the turn's synchronous work and promise callbacks are done. Calls are
 * pipelined on the client's connection; each call costs Redis one script run and one TIME, however many decisions
 * it carries.
 */
export class ScriptBatcher {
  /** Script calls sent, NOSCRIPT resends included. */
  calls = 0
  private open: ScriptCall | undefined
  private readonly bySlot = new Map<number, ScriptCall>()
  private scheduled = false

  constructor(
    private readonly port: RedisPort,
    private readonly script: string,
    private readonly sha: string,
    private params: readonly [string, string],
    /** The time argument: '' for the server's clock, or the injected clock's reading. */
    private readonly timeArg: () => string,
    private readonly clock: Clock,
    private readonly sink: BatchSink,
  ) {}

  add(decision: PendingDecision): void {
    let call: ScriptCall
    if (this.port.cluster) {
      const slot = clusterSlot(decision.redisKey)
      call = this.bySlot.get(slot) ?? new ScriptCall(this, this.params)
      if (call.decisions.length === 0) this.bySlot.set(slot, call)
      if (this.push(call, decision)) this.bySlot.delete(slot)
    } else {
      call = this.open ?? (this.open = new ScriptCall(this, this.params))
      if (this.push(call, decision)) this.open = undefined
    }
    if (!this.scheduled) {
      this.scheduled = true
      // After the promise callbacks of this turn: decisions made in reaction to replies join the same calls.
      process.nextTick(this.flush)
    }
  }

  /**
   * The limit's parameters for calls from now on (a live rule changed): the decisions gathered so far go out first,
   * with the parameters their keys were made for.
   */
  setParams(params: readonly [string, string]): void {
    this.flush()
    this.params = params
  }

  /** @internal */
  reply(call: ScriptCall, reply: unknown): void {
    const decisions = call.decisions
    if (!Array.isArray(reply) || reply.length !== decisions.length * 2 || !reply.every(isNumber)) {
      this.sink.failed(
        decisions,
        new RedisError(`unexpected reply from the rate-limit script: ${describeValue(reply)}`),
      )
      return
    }
    for (let i = 0; i < decisions.length; i++) {
      this.sink.decided(decisions[i], reply[2 * i] as number, reply[2 * i + 1] as number, call.sentAt)
    }
    this.sink.answered()
  }

  /** @internal */
  error(call: ScriptCall, error: unknown): void {
    if (isNoScript(error) && !call.resent) {
      // The server lost its scripts (restart, SCRIPT FLUSH, a promoted replica): EVAL sends and caches it again.
      call.resent = true
      this.calls++
      this.run(call, () => this.port.eval(this.script, call.keys, call.args))
      return
    }
    this.sink.failed(call.decisions, clientFailure('the Redis call failed', error))
  }

  private push(call: ScriptCall, decision: PendingDecision): boolean {
    call.decisions.push(decision)
    call.keys.push(decision.redisKey)
    call.args.push(decision.costArg)
    if (call.decisions.length < MAX_BATCH) return false
    this.send(call)
    return true
  }

  private readonly flush = (): void => {
    this.scheduled = false
    const open = this.open
    if (open !== undefined) {
      this.open = undefined
      this.send(open)
    }
    if (this.bySlot.size > 0) {
      for (const call of this.bySlot.values()) this.send(call)
      this.bySlot.clear()
    }
  }

  private send(call: ScriptCall): void {
    call.args[2] = this.timeArg()
    call.sentAt = this.clock()
    this.calls++
    this.run(call, () => this.port.evalSha(this.sha, call.keys, call.args))
  }

  private run(call: ScriptCall, start: () => Promise<unknown>): void {
    try {
      start().then(call.onReply, call.onError)
    } catch (error) {
      call.onError(error) // a client that throws instead of rejecting
    }
  }
}

/** A number the scripts can answer: finite (NaN or an infinite wait is a broken server, not a decision). */
function isNumber(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value)
}
