import type { ServerResponse } from 'http'
import type { Http2ServerResponse, OutgoingHttpHeaders, ServerHttp2Stream } from 'http2'

import { SHED_LATENCY, SHED_QUEUE_DELAY, SHED_RATE_LIMIT } from './inbound-guard'

/** What a shed request is answered: status and a small JSON body (built once, never per request). */
export interface ShedReply {
  status: 503 | 429
  body: string
  /** The body's length in bytes (ASCII). */
  length: string
}

function reply(status: 503 | 429, body: object): ShedReply {
  const text = JSON.stringify(body)
  return { status, body: text, length: String(Buffer.byteLength(text)) }
}

const IN_FLIGHT = reply(503, { error: 'overloaded', reason: 'in-flight' })
const QUEUE_DELAY = reply(503, { error: 'overloaded', reason: 'queue-delay' })
const LATENCY = reply(503, { error: 'overloaded', reason: 'latency' })
const RATE_LIMITED = reply(429, { error: 'rate limited' })

export const JSON_TYPE = 'application/json; charset=utf-8'

/** The answer for a negative acquire result. */
export function shedReply(reason: number): ShedReply {
  switch (reason) {
    case SHED_RATE_LIMIT:
      return RATE_LIMITED
    case SHED_QUEUE_DELAY:
      return QUEUE_DELAY
    case SHED_LATENCY:
      return LATENCY
    default:
      return IN_FLIGHT
  }
}

// Retry-After values as strings, made once each (announced values are few: mostly 1 s, up to a day).
const secondsText: string[] = []
export function retryAfterText(seconds: number): string {
  return secondsText[seconds] ?? (secondsText[seconds] = String(seconds))
}

// Raw header lists by reason (index -reason) and Retry-After seconds, each made once: a shed allocates nothing.
const headerLists: string[][][] = [[], [], [], [], []]

/** Answers a shed request on a raw node:http response (node:http, Express) or a node:http2 compatibility one. */
export function writeShed(res: ServerResponse | Http2ServerResponse, reason: number, retryAfter: number): void {
  const r = shedReply(reason)
  const lists = headerLists[-reason] ?? headerLists[1]
  const headers =
    lists[retryAfter] ??
    (lists[retryAfter] = [
      'content-type',
      JSON_TYPE,
      'content-length',
      r.length,
      'retry-after',
      retryAfterText(retryAfter),
    ])
  ;(res as ServerResponse).writeHead(r.status, headers)
  res.end(r.body)
}

// HTTP/2 response headers by reason and Retry-After seconds, each made once (respond() copies what it is given).
const headerObjects: OutgoingHttpHeaders[][] = [[], [], [], []]

/** Answers a shed request on a node:http2 stream (the core API); a HEAD request gets the headers only. */
export function respondShed(stream: ServerHttp2Stream, head: boolean, reason: number, retryAfter: number): void {
  if (stream.destroyed) return // reset by the client already: nothing to answer
  const r = shedReply(reason)
  const objects = headerObjects[-reason] ?? headerObjects[1]
  const headers =
    objects[retryAfter] ??
    (objects[retryAfter] = Object.freeze({
      ':status': r.status,
      'content-type': JSON_TYPE,
      'content-length': r.length,
      'retry-after': retryAfterText(retryAfter),
    }))
  stream.respond(headers, { endStream: head })
  if (!head) stream.end(r.body)
}
