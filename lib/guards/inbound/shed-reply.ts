import type { ServerResponse } from 'http'
import type { Http2ServerResponse, OutgoingHttpHeaders, ServerHttp2Stream } from 'http2'

import { Shed, shedReason } from '../../foundation/errors/shed'
import { PROBE_NOT_READY, PROBE_READY } from './inbound-guard-types'

/** What a shed request is answered: status and a small JSON body (built once, never per request). */
export interface ShedReply {
  status: 503 | 429 | 403 | 200
  body: string
  /** The body's length in bytes (ASCII). */
  length: string
  /** Whether the answer carries a Retry-After (not a deny entry's 403, nor a readiness answer). */
  retries: boolean
}

function reply(status: ShedReply['status'], body: object, retries = true): ShedReply {
  const text = JSON.stringify(body)
  return { status, body: text, length: String(Buffer.byteLength(text)), retries }
}

// By Shed code (index -code): a rate limit and a key's or a connection's concurrency limit are the client's (429: it
// asks for more than its share, docs/rules/key-concurrency.md), every other reason is the server's load (503).
const CLIENT_ERRORS: Partial<Record<number, string>> = {
  [Shed.rateLimit]: 'rate limited',
  [Shed.keyConcurrency]: 'too many concurrent requests',
  [Shed.connectionConcurrency]: 'too many concurrent requests on one connection',
  [Shed.banned]: 'banned',
}
const REPLIES: ShedReply[] = []
for (const code of Object.values(Shed)) {
  const error = CLIENT_ERRORS[code]
  REPLIES[-code] =
    code === Shed.denied
      ? reply(403, { error: 'forbidden' }, false) // an access list's deny entry (docs/rules/access-lists.md)
      : error !== undefined
        ? reply(429, { error })
        : reply(503, { error: 'overloaded', reason: shedReason(code) })
}
// The readiness answers (docs/guide/gateway.md, "Readiness"), by the codes tryAcquire gives the probe.
REPLIES[-PROBE_READY] = reply(200, { ready: true }, false)
REPLIES[-PROBE_NOT_READY] = reply(503, { ready: false, reason: 'shedding' }, false)

export const JSON_TYPE = 'application/json; charset=utf-8'

/** The answer for a Shed code (anything else is answered as Shed.inFlight). */
export function shedReply(code: number): ShedReply {
  return REPLIES[-code] ?? REPLIES[-Shed.inFlight]
}

// Retry-After values as strings, made once each (announced values are few: mostly 1 s, up to a day).
const secondsText: string[] = []
export function retryAfterText(seconds: number): string {
  return secondsText[seconds] ?? (secondsText[seconds] = String(seconds))
}

// Raw header lists by Shed code (index -code) and Retry-After seconds, each made once: a shed allocates nothing.
const headerLists: string[][][] = Array.from(REPLIES, () => [])

function headerList(r: ShedReply, retryAfter: number): string[] {
  const list = ['content-type', JSON_TYPE, 'content-length', r.length]
  if (r.retries) list.push('retry-after', retryAfterText(retryAfter))
  return list
}

/**
 * Answers a shed request on a raw node:http response (node:http, Express) or a node:http2 compatibility one;
 * `extra`: the rate limit's header fields ([name, value, ...]) to send with it.
 */
export function writeShed(
  res: ServerResponse | Http2ServerResponse,
  code: number,
  retryAfter: number,
  extra?: readonly string[],
): void {
  const r = shedReply(code)
  const lists = headerLists[-code] ?? headerLists[-Shed.inFlight]
  let headers = lists[retryAfter] ?? (lists[retryAfter] = headerList(r, retryAfter))
  if (extra !== undefined) headers = headers.concat(extra)
  ;(res as ServerResponse).writeHead(r.status, headers)
  res.end(r.body)
}

// HTTP/2 response headers by Shed code and Retry-After seconds, each made once (respond() copies what it is given).
const headerObjects: OutgoingHttpHeaders[][] = Array.from(REPLIES, () => [])

/** The header fields of `extra` ([name, value, ...]) added to `headers`, as a new object. */
export function withFields(headers: OutgoingHttpHeaders, extra: readonly string[]): OutgoingHttpHeaders {
  const out = { ...headers }
  for (let i = 0; i < extra.length; i += 2) out[extra[i]] = extra[i + 1]
  return out
}

/** Answers a shed request on a node:http2 stream (the core API); a HEAD request gets the headers only. */
export function respondShed(
  stream: ServerHttp2Stream,
  head: boolean,
  code: number,
  retryAfter: number,
  extra?: readonly string[],
): void {
  if (stream.destroyed) return // reset by the client already: nothing to answer
  const r = shedReply(code)
  const objects = headerObjects[-code] ?? headerObjects[-Shed.inFlight]
  let headers =
    objects[retryAfter] ??
    (objects[retryAfter] = Object.freeze({ ':status': r.status, ...headerObject(headerList(r, retryAfter)) }))
  if (extra !== undefined) headers = withFields(headers, extra)
  stream.respond(headers, { endStream: head })
  if (!head) stream.end(r.body)
}

function headerObject(list: readonly string[]): OutgoingHttpHeaders {
  return withFields({}, list)
}
