import type { ServerResponse } from 'http'

import { DEGRADED, plainAnswer } from '../../guards/inbound/degraded-response'
import type { DegradedAnswer, FallbackReason } from '../../guards/inbound/fallback'
import { CALLBACK_FAILED, type InboundGuard } from '../../guards/inbound/inbound-guard'
import { JSON_TYPE, retryAfterText, shedReply } from '../../guards/inbound/shed-reply'

/** A fallback's answer as a web Response; undefined when the Fetch API refuses one of its headers. */
function answerResponse(answer: DegradedAnswer): Response | undefined {
  const headers = new Headers()
  try {
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, String(v))
      else headers.set(name, String(value))
    }
  } catch {
    return undefined
  }
  return new Response(answer.body as ConstructorParameters<typeof Response>[0], { status: answer.status, headers })
}

/** The fallback's answer when it gave one the Fetch API takes; undefined otherwise (a refused one is counted). */
function fallbackResponse<C>(guard: InboundGuard<C>, answer: DegradedAnswer | undefined | null): Response | undefined {
  if (answer == null) return undefined
  const response = answerResponse(answer)
  return guard.fallbackWritten(response !== undefined) ? response : undefined
}

/**
 * A refused request's answer: for a Shed code, the fallback's, else the plain 503 or 429 with Retry-After; for
 * CALLBACK_FAILED (a function of the options threw), the plain 500.
 */
export function refusal<C>(guard: InboundGuard<C>, c: C, code: number): Response {
  if (code === CALLBACK_FAILED) return answerResponse(plainAnswer('error', false)) as Response
  if (guard.fallback !== undefined) {
    const response = fallbackResponse(guard, guard.answer(c, guard.reasonOf(code)))
    if (response !== undefined) return response
  }
  const r = shedReply(code)
  const headers = new Headers({ 'content-type': JSON_TYPE })
  if (r.retries) headers.set('retry-after', retryAfterText(guard.retryAfter))
  appendFields(headers, guard.limitHeaders)
  return new Response(r.body, { status: r.status, headers })
}

/** The rate limit's header fields ([name, value, ...], docs/guide/gateway.md) onto `headers`. */
export function appendFields(
  headers: { set(name: string, value: string): void },
  fields: readonly string[] | undefined,
) {
  if (fields === undefined) return
  for (let i = 0; i < fields.length; i += 2) headers.set(fields[i], fields[i + 1])
}

/**
 * The answer in the handler's place (it timed out, or failed and the fallback answers): the fallback's as
 * `guard.answer` gave it, else (none, or one refused: counted) the plain one. `outgoing` (on Node) is marked so that
 * its time is not counted.
 */
export function degradedResponse<C>(
  guard: InboundGuard<C>,
  reason: FallbackReason,
  answer: DegradedAnswer | undefined | null,
  outgoing: ServerResponse | undefined,
): Response {
  if (outgoing !== undefined) (outgoing as { [DEGRADED]?: boolean })[DEGRADED] = true
  return fallbackResponse(guard, answer) ?? (answerResponse(plainAnswer(reason, answer !== undefined)) as Response)
}

/** What an admitted request whose client left before its handler ran is "answered": nobody reads it. */
export const goneResponse = (): Response => new Response(null, { status: 499 })
