// An inbound guard's stats, gathered from the parts that count (off the hot path: stats() only).
import type { BbrLimiter } from '../../components/bbr/bbr-limiter'
import type { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import type { AccessScreen } from './access-screen'
import type { GuardAnswers } from './guard-answers'
import type { InboundGuardStats } from './inbound-guard-types'
import type { RequestGate } from './request-gate'

/** The guard's own counts of refusals and requests let past. */
export interface GuardCounts {
  keys: number
  connections: number
  bypassed: number
  callbackErrors: number
}

/** InboundGuardStats, the gates' counts summed over the guard's rules (routes may have gates of their own). */
export function guardStats<Req>(
  rules: ReadonlyArray<{ gate: RequestGate<Req> | undefined }>,
  answers: GuardAnswers<Req>,
  screen: AccessScreen<Req> | undefined,
  counts: GuardCounts,
  limiter: BbrLimiter | undefined,
  keyConcurrency: KeyConcurrencyLimiter | undefined,
): InboundGuardStats {
  const gates = new Set<RequestGate<Req>>()
  for (const rule of rules) if (rule.gate !== undefined) gates.add(rule.gate)
  let rateLimited = 0
  let shedForced = 0
  let shedDeadline = 0
  for (const gate of gates) {
    rateLimited += gate.rateLimited
    shedForced += gate.shedForced
    shedDeadline += gate.shedDeadline
  }
  return {
    rateLimited,
    shedKeyConcurrency: counts.keys,
    shedConnectionConcurrency: counts.connections,
    callbackErrors: counts.callbackErrors,
    shedForced,
    shedDeadline,
    clientGone: answers.clientGone,
    timedOut: answers.timedOut,
    fallbacks: answers.fallbacks,
    fallbackErrors: answers.fallbackErrors,
    limiter: limiter?.stats(),
    keyConcurrency: keyConcurrency?.stats(),
    bypassed: counts.bypassed,
    denied: screen?.denied ?? 0,
    banned: screen?.banned ?? 0,
  }
}
