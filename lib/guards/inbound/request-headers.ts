/**
 * undici dispatch options with one header added: undici takes headers as an object, a flat array of names and
 * values, or an iterable of pairs (a Headers, a Map). The caller's options are never changed: a copy is returned.
 */
export function withHeader<O>(options: O, name: string, value: string): O {
  const o = options as { headers?: unknown }
  const headers = o.headers
  let next: unknown
  if (headers == null) next = { [name]: value }
  else if (Array.isArray(headers))
    next =
      typeof headers[0] === 'string' || headers.length === 0 ? [...headers, name, value] : [...headers, [name, value]]
  else if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function')
    next = [...(headers as Iterable<[string, string]>), [name, value]]
  else next = { ...(headers as object), [name]: value }
  return { ...o, headers: next } as O
}
