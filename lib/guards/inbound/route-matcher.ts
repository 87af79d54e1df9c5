// The route table's matcher (docs/guide/gateway.md, "Routes"): patterns compiled into a tree of path segments, walked
// once per request over the URL's characters (no regular expression, no scan of every route, no allocation). A
// segment is matched without regard to ASCII case and a trailing slash is ignored, so that a client cannot step
// around a route's policy with a spelling its framework routes to the same handler.
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'

const SLASH = 47

/** FNV-1a over a segment's characters, ASCII letters folded to lower case (a small integer: a fast Map key). */
function foldedHash(s: string, from: number, to: number): number {
  let h = 0x811c9dc5
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i)
    if (c >= 65 && c <= 90) c |= 32
    h = Math.imul(h ^ c, 16777619)
  }
  return h & 0x3fffffff
}

function sameSegment(folded: string, s: string, from: number, to: number): boolean {
  if (folded.length !== to - from) return false
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i)
    if (c >= 65 && c <= 90) c |= 32
    if (c !== folded.charCodeAt(i - from)) return false
  }
  return true
}

/** Static children a node compares one by one (length, then characters) before it looks them up by hash. */
const FEW = 8

class RouteNode<T> {
  /** Static children by the folded hash of their segment; a collision chains through `sameHash`. */
  readonly statics = new Map<number, RouteNode<T>>()
  /** The same children in a list while they are FEW or fewer (undefined past that). */
  few: RouteNode<T>[] | undefined = []
  sameHash: RouteNode<T> | undefined = undefined
  param: RouteNode<T> | undefined = undefined
  /** Values of routes ending here, by method, and for any method. */
  readonly methods = new Map<string, T>()
  any: T | undefined = undefined
  /** Values of `.../*` routes at this node: they match any rest of the path. */
  readonly restMethods = new Map<string, T>()
  restAny: T | undefined = undefined

  constructor(readonly segment: string) {}

  child(segment: string): RouteNode<T> {
    const h = foldedHash(segment, 0, segment.length)
    const first = this.statics.get(h)
    for (let n = first; n !== undefined; n = n.sameHash) if (n.segment === segment) return n
    const made = new RouteNode<T>(segment)
    made.sameHash = first
    this.statics.set(h, made)
    this.few = this.few !== undefined && this.few.length < FEW ? [...this.few, made] : undefined
    return made
  }

  /** The static child whose segment is `url[from, to)` (ASCII case folded), or undefined. */
  find(url: string, from: number, to: number): RouteNode<T> | undefined {
    const few = this.few
    if (few !== undefined) {
      for (let i = 0; i < few.length; i++) if (sameSegment(few[i].segment, url, from, to)) return few[i]
      return undefined
    }
    for (let n = this.statics.get(foldedHash(url, from, to)); n !== undefined; n = n.sameHash)
      if (sameSegment(n.segment, url, from, to)) return n
    return undefined
  }
}

/** A route's value for `method` at a node: its own, HEAD falling back to GET (as frameworks route it), or any. */
function valueFor<T>(methods: Map<string, T>, any: T | undefined, method: string): T | undefined {
  if (methods.size === 0) return any
  const own = methods.get(method)
  if (own !== undefined) return own
  if (method === 'HEAD') return methods.get('GET') ?? any
  return any
}

const PATTERN = /^\/[^\s?#]*$/

/**
 * Patterns `/a/b`, `/users/:id` (`:name` takes one non-empty segment) and `/static/*` (the rest of the path, last
 * only), each for one method or for any. Static segments beat parameters, parameters beat `*`, and a failed static
 * branch falls back to the others, as routers do.
 */
export class RouteMatcher<T> {
  private readonly root = new RouteNode<T>('')
  /** Exact paths (as written) of routes without parameters: the fast path for a URL spelled as its route. */
  private readonly exact = new Map<string, Map<string, T> & { any?: T }>()
  private lastUrl: unknown = undefined
  private lastMethod: unknown = undefined
  private lastValue: T | undefined = undefined
  size = 0

  /** Adds `pattern` for `method` (upper case) or for any (undefined); `field` names the option in errors. */
  add(method: string | undefined, pattern: string, value: T, field: string): void {
    if (!PATTERN.test(pattern))
      throw new InvalidOptionError(field, pattern, 'a path pattern: /a/b, /users/:id, /files/*')
    const path = pattern.length > 1 && pattern.endsWith('/') ? pattern.slice(0, -1) : pattern
    const segments = path === '/' ? [] : path.slice(1).split('/')
    let node = this.root
    let rest = false
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]
      if (segment === '*' && i === segments.length - 1) rest = true
      else if (segment.startsWith(':') && segment.length > 1) node = node.param ??= new RouteNode<T>(segment)
      else if (segment.includes('*') || segment.startsWith(':'))
        throw new InvalidOptionError(field, pattern, "a pattern whose '*' is its last segment and ':name' a whole one")
      else node = node.child(segment.toLowerCase())
    }
    const methods = rest ? node.restMethods : node.methods
    const taken = method === undefined ? (rest ? node.restAny : node.any) : methods.get(method)
    if (taken !== undefined) throw new InvalidOptionError(field, pattern, 'a route given once')
    if (method === undefined) {
      if (rest) node.restAny = value
      else node.any = value
    } else methods.set(method, value)
    if (!rest && !segments.some((s) => s.startsWith(':'))) {
      let entry = this.exact.get(path)
      if (entry === undefined) this.exact.set(path, (entry = new Map()))
      if (method === undefined) entry.any = value
      else entry.set(method, value)
    }
    this.size++
  }

  /** The value of the route `url` (path and query) takes with `method`, or undefined. Never throws or allocates. */
  match(method: unknown, url: unknown): T | undefined {
    if (url === this.lastUrl && method === this.lastMethod) return this.lastValue
    if (typeof url !== 'string' || typeof method !== 'string') return undefined
    let value: T | undefined
    const exact = this.exact.size === 0 ? undefined : this.exact.get(url)
    if (exact !== undefined) value = valueFor(exact, exact.any, method)
    if (value === undefined && url.charCodeAt(0) === SLASH) {
      let end = url.indexOf('?')
      if (end < 0) end = url.length
      if (end > 1 && url.charCodeAt(end - 1) === SLASH) end-- // a trailing slash
      // The first branch at each segment, in one loop; only when it ends in no route, the search that backtracks.
      value = this.descend(url, end, method)
      if (value === undefined) value = this.walk(this.root, url, 1, end, method)
    }
    this.lastUrl = url
    this.lastMethod = method
    this.lastValue = value
    return value
  }

  /**
   * Follows the first branch at each segment (a static child that matches, else the parameter, else the node's `*`):
   * the route a backtracking search finds first, when it finds one down this branch; undefined when it does not.
   */
  private descend(url: string, end: number, method: string): T | undefined {
    let node = this.root
    let from = 1
    while (from < end) {
      let to = from
      while (to < end && url.charCodeAt(to) !== SLASH) to++
      let next = node.find(url, from, to)
      if (next === undefined && to > from) next = node.param
      if (next === undefined) return valueFor(node.restMethods, node.restAny, method)
      node = next
      from = to + 1
    }
    const here = valueFor(node.methods, node.any, method)
    return here !== undefined ? here : valueFor(node.restMethods, node.restAny, method)
  }

  /** The route for the rest of the path from `from` (the start of a segment) under `node`, backtracking. */
  private walk(node: RouteNode<T>, url: string, from: number, end: number, method: string): T | undefined {
    if (from >= end) {
      const here = valueFor(node.methods, node.any, method)
      return here !== undefined ? here : valueFor(node.restMethods, node.restAny, method)
    }
    let to = url.indexOf('/', from)
    if (to < 0 || to > end) to = end
    const n = node.find(url, from, to)
    if (n !== undefined) {
      const found = this.walk(n, url, to + 1, end, method)
      if (found !== undefined) return found
    }
    if (node.param !== undefined && to > from) {
      const found = this.walk(node.param, url, to + 1, end, method)
      if (found !== undefined) return found
    }
    return valueFor(node.restMethods, node.restAny, method)
  }
}
