/** A function returning the next rank of a Zipf(s, v) stream over n ranks. */
export function zipfSampler(options: { s: number; v?: number; n: number; seed: number }): () => number
/** Exact counts of a stream: Map key -> count. */
export function exactCounts(keys: Iterable<string>): Map<string, number>
/** The exact top-k as [key, count] pairs, count descending, ties by key ascending (the order list() uses). */
export function exactTop(counts: Map<string, number>, k: number): Array<[string, number]>
