// An access list's CIDR ranges compiled for matching (docs/rules/access-lists.md, "Matching"): the nested ranges
// flattened into disjoint intervals, each with the mode of the longest prefix that covers it, sorted, in typed
// arrays. A match is a binary search: about log2(2n) steps, no allocation.

/** Ranges of one family: `width` words an address (1 for IPv4, 4 for IPv6). */
export interface RangeInput {
  width: number
  /** The ranges' first addresses, `width` words each. */
  starts: Uint32Array
  prefixes: Uint8Array
  modes: Uint8Array
  count: number
}

/** Disjoint intervals, sorted: first and last address (`width` words each) and a mode. */
export interface Intervals {
  width: number
  firsts: Uint32Array
  lasts: Uint32Array
  modes: Uint8Array
  count: number
}

/** A range's last address: its first with every host bit set. */
function lastOf(input: RangeInput, r: number, out: Uint32Array, at: number): void {
  const w = input.width
  const prefix = input.prefixes[r]
  for (let i = 0; i < w; i++) {
    const kept = Math.min(32, Math.max(0, prefix - 32 * i))
    const host = kept === 32 ? 0 : 0xffffffff >>> kept
    out[at + i] = (input.starts[r * w + i] | host) >>> 0
  }
}

function compare(a: Uint32Array, ai: number, b: Uint32Array, bi: number, w: number): number {
  for (let i = 0; i < w; i++) {
    const x = a[ai + i]
    const y = b[bi + i]
    if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/** `value` + 1 in place; false when it wrapped past the last address. */
function increment(value: Uint32Array, w: number): boolean {
  for (let i = w - 1; i >= 0; i--) {
    if (value[i] !== 0xffffffff) {
      value[i]++
      return true
    }
    value[i] = 0
  }
  return false
}

/** `value` - 1 in place (never called on address 0: a range starting there has nothing before it). */
function decrement(value: Uint32Array, w: number): void {
  for (let i = w - 1; i >= 0; i--) {
    if (value[i] !== 0) {
      value[i]--
      return
    }
    value[i] = 0xffffffff
  }
}

/** The ranges' order: by first address, then shorter prefix (the enclosing range) first. */
function order(input: RangeInput): number[] {
  const w = input.width
  const indices = Array.from({ length: input.count }, (_, i) => i)
  const s = input.starts
  return indices.sort((a, b) => compare(s, a * w, s, b * w, w) || input.prefixes[a] - input.prefixes[b])
}

/**
 * Flattens CIDR ranges (any two are disjoint or nested) into disjoint intervals, each taking the mode of the
 * innermost range that covers it. At most 2n - 1 intervals for n ranges.
 */
export function flatten(input: RangeInput): Intervals {
  const w = input.width
  const capacity = Math.max(1, 2 * input.count)
  const out: Intervals = {
    width: w,
    firsts: new Uint32Array(capacity * w),
    lasts: new Uint32Array(capacity * w),
    modes: new Uint8Array(capacity),
    count: 0,
  }
  const ends = new Uint32Array(input.count * w) // each range's last address
  for (let r = 0; r < input.count; r++) lastOf(input, r, ends, r * w)
  const stack: number[] = [] // open ranges, the enclosing ones first
  const cursor = new Uint32Array(w) // the first address no interval has covered yet
  let exhausted = false // the cursor moved past the last address
  const emit = (upTo: Uint32Array, at: number, mode: number): void => {
    if (exhausted || compare(cursor, 0, upTo, at, w) > 0) return
    const n = out.count++
    out.firsts.set(cursor, n * w)
    out.lasts.set(upTo.subarray(at, at + w), n * w)
    out.modes[n] = mode
  }
  const closeTop = (): void => {
    const top = stack.pop() as number
    emit(ends, top * w, input.modes[top])
    if (!exhausted && compare(cursor, 0, ends, top * w, w) <= 0) {
      cursor.set(ends.subarray(top * w, top * w + w))
      exhausted = !increment(cursor, w)
    }
  }
  const before = new Uint32Array(w)
  for (const r of order(input)) {
    while (stack.length > 0 && compare(ends, stack[stack.length - 1] * w, input.starts, r * w, w) < 0) closeTop()
    const start = input.starts.subarray(r * w, r * w + w)
    if (stack.length > 0 && compare(cursor, 0, start, 0, w) < 0) {
      before.set(start)
      decrement(before, w)
      emit(before, 0, input.modes[stack[stack.length - 1]])
    }
    cursor.set(start)
    exhausted = false
    stack.push(r)
  }
  while (stack.length > 0) closeTop()
  return out
}

/** The mode of the IPv4 interval holding `address` (a 32-bit number), or 0. */
export function matchV4(t: Intervals, address: number): number {
  const firsts = t.firsts
  let lo = 0
  let hi = t.count - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    if (firsts[mid] <= address) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found >= 0 && address <= t.lasts[found] ? t.modes[found] : 0
}

/** The mode of the IPv6 interval holding the address in `words[0..3]`, or 0. */
export function matchV6(t: Intervals, words: Uint32Array): number {
  const firsts = t.firsts
  let lo = 0
  let hi = t.count - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    if (compare(firsts, mid * 4, words, 0, 4) <= 0) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found >= 0 && compare(words, 0, t.lasts, found * 4, 4) <= 0 ? t.modes[found] : 0
}
