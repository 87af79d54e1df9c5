import type { IncomingMessage, ServerResponse } from 'http'

import type { DegradedAnswer } from '../../guards/inbound/fallback'
import { clearHeaders, DEGRADED } from '../../guards/inbound/degraded-response'

/**
 * A request as NestJS hands it to a guard: Express's request (an IncomingMessage with `ip`, honouring Express's
 * `trust proxy`) or Fastify's (`raw`, `ip`, honouring Fastify's `trustProxy`).
 */
export type NestRequest =
  | (IncomingMessage & { ip?: string; raw?: undefined })
  | { headers: IncomingMessage['headers']; ip?: string; raw: IncomingMessage }

type NestFastifyRequest = Extract<NestRequest, { raw: IncomingMessage }>

/** A response as NestJS hands it out: Express's (a ServerResponse) or Fastify's reply (`raw`, `code`, `header`). */
export type NestResponse =
  | ServerResponse
  | {
      raw: ServerResponse
      code(status: number): unknown
      header(name: string, value: unknown): unknown
      getHeaders(): Record<string, unknown>
      removeHeader(name: string): unknown
      send(body: unknown): unknown
    }

type NestFastifyReply = Exclude<NestResponse, ServerResponse>

export const rawRequest = (request: NestRequest): IncomingMessage =>
  (request as NestFastifyRequest).raw ?? (request as IncomingMessage)

export const rawResponse = (response: NestResponse): ServerResponse =>
  (response as NestFastifyReply).raw ?? (response as ServerResponse)

const isReply = (response: NestResponse): response is NestFastifyReply =>
  typeof (response as NestFastifyReply).code === 'function' && (response as NestFastifyReply).raw !== undefined

/** Sets a header on the answer the platform will send (Fastify keeps its reply's headers apart from the raw ones). */
export function setHeader(response: NestResponse, name: string, value: string): void {
  if (isReply(response)) response.header(name, value)
  else response.setHeader(name, value)
}

/** The rate limit's header fields ([name, value, ...], docs/guide/gateway.md), when the guard's decision gave any. */
export function setFields(response: NestResponse, fields: readonly string[] | undefined): void {
  if (fields === undefined) return
  for (let i = 0; i < fields.length; i += 2) setHeader(response, fields[i], fields[i + 1])
}

/** Removes every header of the response (Fastify's reply's and its raw response's): an answer in the handler's place. */
export function clearResponse(response: NestResponse): void {
  if (isReply(response)) for (const name of Object.keys(response.getHeaders())) response.removeHeader(name)
  clearHeaders(rawResponse(response))
}

/**
 * Sends `answer` now, through the platform (so that Fastify's hooks run), marked as given in the handler's place;
 * false when Node refused it (a header it cannot send), with nothing sent and the headers cleared. Never throws.
 */
export function sendAnswer(response: NestResponse, answer: DegradedAnswer): boolean {
  const raw = rawResponse(response) as ServerResponse & { [DEGRADED]?: boolean }
  raw[DEGRADED] = true
  if (raw.headersSent || raw.writableEnded) return true
  try {
    if (isReply(response)) {
      response.code(answer.status)
      for (const [name, value] of Object.entries(answer.headers)) response.header(name, value)
      response.send(typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body))
      return true
    }
    raw.writeHead(answer.status, answer.headers as Record<string, string>)
    raw.end(answer.body)
    return true
  } catch {
    if (raw.headersSent) return true
    clearResponse(response)
    return false
  }
}
