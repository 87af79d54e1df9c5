import type { ServerResponse } from 'http'

import { DEGRADED, plainAnswer } from '../../guards/inbound/degraded-response'
import type { DegradedAnswer, FallbackReason } from '../../guards/inbound/fallback'
import type { InboundGuard } from '../../guards/inbound/inbound-guard'
import { JSON_TYPE, retryAfterText, shedReply } from '../../guards/inbound/shed-reply'

/** A fallback's answer as a web Response. */
export function answerResponse(answer: DegradedAnswer): Response {
  const headers = new Headers()
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, String(v))
    else headers.set(name, String(value))
  }
  return new Response(answer.body as ConstructorParameters<typeof Response>[0], { status: answer.status, headers })
}

/** A refused request's answer (a Shed code): the fallback's, else the plain 503 or 429 with Retry-After. */
export function refusal<C>(guard: InboundGuard<C>, c: C, code: number): Response {
  const answer = guard.fallback === undefined ? undefined : guard.answer(c, guard.reasonOf(code))
  if (answer) return answerResponse(answer)
  const r = shedReply(code)
  return new Response(r.body, {
    status: r.status,
    headers: { 'content-type': JSON_TYPE, 'retry-after': retryAfterText(guard.retryAfter) },
  })
}

/**
 * The answer in the handler's place (it timed out, or failed and the fallback answers): the fallback's as
 * `guard.answer` gave it, or the plain one. `outgoing` (on Node) is marked so that its time is not counted.
 */
export function degradedResponse(
  reason: FallbackReason,
  answer: DegradedAnswer | undefined | null,
  outgoing: ServerResponse | undefined,
): Response {
  if (outgoing !== undefined) (outgoing as { [DEGRADED]?: boolean })[DEGRADED] = true
  return answerResponse(answer ?? plainAnswer(reason, answer === null))
}

/** What an admitted request whose client left before its handler ran is "answered": nobody reads it. */
export const goneResponse = (): Response => new Response(null, { status: 499 })
