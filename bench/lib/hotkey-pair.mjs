// The hot-key cases of bench/peers.bench.mjs and bench/hotkeys-ab.mjs: a Zipf stream of 16-byte keys, each event a
// key string from a table (as a gateway's key is one string), counted by HeavyKeeper and by an exact Map. Both are
// first fed the whole stream once, so that each is measured in its steady state (the Map then holds every key the
// stream has).
import { zipfSampler } from '../../test/hotkeys/zipf-stream.mjs'

const STREAM = Number(process.env.PEERS_STREAM ?? 2_000_000)
const tables = new Map()

/** The key table of `distinct` keys, made once per process. */
function keyTable(distinct) {
  let keys = tables.get(distinct)
  if (keys === undefined) {
    keys = Array.from({ length: distinct }, (_, rank) => `key:${String(rank).padStart(12, '0')}`)
    tables.set(distinct, keys)
  }
  return keys
}

/** How the bench names a stream: `Zipf 1.0, 1 000 keys`. */
export function hotKeySetName(s, distinct) {
  return `Zipf ${s.toFixed(1)}, ${distinct.toLocaleString('en-US').replace(/,/g, ' ')} keys`
}

// Each case's function is compiled from its own source (a numbered comment): closures of one source text share
// their feedback, so two HeavyKeepers' cases (or two builds' classes) would make one call site see both.
let compiledCases = 0
const compileCase = (body, target, keys, ranks) =>
  new Function('target', 'keys', 'ranks', 'STREAM', `// hot-key case ${compiledCases++}\nlet i = 0\nreturn ${body}`)(
    target,
    keys,
    ranks,
    STREAM,
  )

/** Returns the two cases [HeavyKeeper.add, exact Map count] of the Zipf(s) stream over `distinct` keys. */
export function hotKeyPair(HeavyKeeper, s, distinct) {
  const keys = keyTable(distinct)
  const next = zipfSampler({ s, v: 1, n: distinct, seed: 20250912 })
  const ranks = new Uint32Array(STREAM)
  for (let i = 0; i < STREAM; i++) ranks[i] = next()
  const hk = new HeavyKeeper({ k: 100, width: 4096, seed: 20250912 })
  const map = new Map()
  for (let i = 0; i < STREAM; i++) {
    const key = keys[ranks[i]]
    hk.add(key)
    map.set(key, (map.get(key) ?? 0) + 1)
  }
  const suffix = hotKeySetName(s, distinct)
  return [
    {
      name: `HeavyKeeper.add, ${suffix}`,
      fn: compileCase('() => target.add(keys[ranks[i++ % STREAM]])', hk, keys, ranks),
    },
    {
      name: `exact Map count, ${suffix}`,
      fn: compileCase(
        '() => {\n  const key = keys[ranks[i++ % STREAM]]\n  target.set(key, (target.get(key) ?? 0) + 1)\n}',
        map,
        keys,
        ranks,
      ),
    },
  ]
}
