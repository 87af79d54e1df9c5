// What a routing term reads of a request, whatever its shape: a node IncomingMessage or Http2ServerRequest, undici's
// dispatch options (headers as an object, a flat array or pairs), a fetch Request, or { method, path, headers }.
// A field that is absent reads undefined; one of an odd shape reads null, which no term matches. Nothing here
// allocates unless a header value is an array or a query value is percent-encoded.
import { type CompiledTerm, TERM } from './route-rules'

type Fields = Record<string, unknown>

/** Whether `a` is the header name `lower` (already lower-case), ignoring the case of `a`. */
function sameName(a: unknown, lower: string): boolean {
  if (typeof a !== 'string' || a.length !== lower.length) return false
  if (a === lower) return true
  for (let i = 0; i < a.length; i++) {
    let c = a.charCodeAt(i)
    if (c >= 65 && c <= 90) c += 32
    if (c !== lower.charCodeAt(i)) return false
  }
  return true
}

/** A header's value as given: a string, the first of an array, null for anything else. */
function valueOf(value: unknown): string | undefined | null {
  if (typeof value === 'string') return value
  if (value === undefined) return undefined
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : null
  return null
}

function fromArray(headers: unknown[], name: string): string | undefined | null {
  if (headers.length > 0 && Array.isArray(headers[0])) {
    for (const pair of headers) if (Array.isArray(pair) && sameName(pair[0], name)) return valueOf(pair[1])
    return undefined
  }
  for (let i = 0; i + 1 < headers.length; i += 2) if (sameName(headers[i], name)) return valueOf(headers[i + 1])
  return undefined
}

function fromIterable(headers: Iterable<unknown>, name: string): string | undefined | null {
  for (const pair of headers) if (Array.isArray(pair) && sameName(pair[0], name)) return valueOf(pair[1])
  return undefined
}

/**
 * A header's first value (`name` lower-case; a header sent twice reads as node or fetch join it, else the first):
 * undefined when absent, null when not readable as a string. Node's requests (they have rawHeaders) keep lower-case
 * keys; other objects are searched whatever the case of their keys.
 */
export function headerOf(request: Fields, name: string): string | undefined | null {
  // A fetch Headers given as the request itself.
  const headers = request.headers ?? (typeof request.get === 'function' ? request : undefined)
  if (headers === undefined || headers === null) return undefined
  if (typeof headers !== 'object') return null
  if (Array.isArray(headers)) return fromArray(headers, name)
  const h = headers as Fields & { get?: unknown }
  if (typeof h.get === 'function') {
    const value = (h.get as (n: string) => unknown).call(h, name) // a fetch Headers (case-blind), or a Map
    return value === null ? undefined : valueOf(value)
  }
  if (typeof (h as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function')
    return fromIterable(h as unknown as Iterable<unknown>, name)
  if (Object.hasOwn(h, name)) return valueOf(h[name])
  if (request.rawHeaders !== undefined) return undefined
  for (const key in h) if (Object.hasOwn(h, key) && sameName(key, name)) return valueOf(h[key])
  return undefined
}

/** The request's path and query: undici's `path`, else `url` (absolute for a fetch Request). */
function targetOf(request: Fields): string | undefined {
  const path = request.path
  if (typeof path === 'string') return path
  const url = request.url
  return typeof url === 'string' ? url : undefined
}

/** Where the path starts in a target: 0 for `/a?b`, after the authority for `http://h/a`; -1 when there is none. */
function pathStart(target: string): number {
  if (target.charCodeAt(0) === 47) return 0
  const scheme = target.indexOf('://')
  return scheme < 0 ? -1 : target.indexOf('/', scheme + 3)
}

/** Whether `text` from `start` to the first `stop` character (or its end) is `value`. */
function segmentIs(text: string, start: number, end: number, value: string): boolean {
  return end - start === value.length && text.startsWith(value, start)
}

function queryEquals(target: string, needle: string, value: string): boolean {
  const question = target.indexOf('?')
  const hash = target.indexOf('#')
  if (question < 0 || (hash >= 0 && hash < question)) return false // no query, or a `?` in the fragment
  const stop = hash < 0 ? target.length : hash
  for (let at = target.indexOf(needle, question + 1); at >= 0 && at < stop; at = target.indexOf(needle, at + 1)) {
    const before = target.charCodeAt(at - 1)
    if (before !== 63 && before !== 38) continue // '?' or '&': a parameter's start, not the middle of a value
    const start = at + needle.length
    const amp = target.indexOf('&', start)
    const end = amp < 0 || amp > stop ? stop : amp
    if (segmentIs(target, start, end, value)) return true
    const raw = target.slice(start, end)
    if (!/[%+]/.test(raw)) return false
    try {
      return decodeURIComponent(raw.replace(/\+/g, ' ')) === value
    } catch {
      return false // a malformed escape
    }
  }
  return false
}

function cookieEquals(cookies: string, needle: string, value: string): boolean {
  for (let at = cookies.indexOf(needle); at >= 0; at = cookies.indexOf(needle, at + 1)) {
    const before = at === 0 ? 59 : cookies.charCodeAt(at - 1)
    if (before !== 59 && before !== 32) continue // ';' or ' ': a cookie's start
    const start = at + needle.length
    const semi = cookies.indexOf(';', start)
    let end = semi < 0 ? cookies.length : semi
    while (end > start && cookies.charCodeAt(end - 1) === 32) end--
    return segmentIs(cookies, start, end, value) // the first cookie of that name decides
  }
  return false
}

/** Whether `request` passes `term`; a field of an odd shape passes none. */
export function termMatches(term: CompiledTerm, request: Fields): boolean {
  switch (term.kind) {
    case TERM.headerEquals:
      return headerOf(request, term.name) === term.value
    case TERM.headerDiffers: {
      const value = headerOf(request, term.name)
      return value === undefined || (value !== null && value !== term.value)
    }
    case TERM.headerPresent:
      return typeof headerOf(request, term.name) === 'string'
    case TERM.cookieEquals: {
      const cookies = headerOf(request, 'cookie')
      return typeof cookies === 'string' && cookieEquals(cookies, term.name, term.value)
    }
    case TERM.queryEquals: {
      const target = targetOf(request)
      return target !== undefined && queryEquals(target, term.name, term.value)
    }
    case TERM.methodEquals: {
      const method = request.method
      return sameUpper(method, term.value)
    }
    case TERM.pathPrefix: {
      const target = targetOf(request)
      const start = target === undefined ? -1 : pathStart(target)
      return start >= 0 && (target as string).startsWith(term.value, start)
    }
    default:
      return false
  }
}

/** Whether `method` is `upper` (upper-case), ignoring the case of `method`. */
function sameUpper(method: unknown, upper: string): boolean {
  if (typeof method !== 'string' || method.length !== upper.length) return false
  if (method === upper) return true
  for (let i = 0; i < method.length; i++) {
    let c = method.charCodeAt(i)
    if (c >= 97 && c <= 122) c -= 32
    if (c !== upper.charCodeAt(i)) return false
  }
  return true
}
