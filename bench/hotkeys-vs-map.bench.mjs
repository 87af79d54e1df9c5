// HeavyKeeper.add beside an exact Map count on the same Zipf streams of 16-byte string keys, in one run: warm (1 000
// keys, everything in cache) and cold (1 000 000 keys, most events miss the CPU caches), Zipf 1.0 and 1.2. Each
// structure is fed the whole stream once first and then measured in its steady state, in interleaved rounds of CPU
// time (bench/lib/interleaved.mjs). A third case only reads each event's key (one character of it): the floor any
// counter of string keys pays. Goal (issue 15): HeavyKeeper.add <= 100 ns and <= 1.25x the Map.
// Run alone: node --expose-gc bench/hotkeys-vs-map.bench.mjs (HOTKEYS_ROUNDS, HOTKEYS_STREAM to change the run).
import * as os from 'os'
import { createRequire } from 'module'
import { writeTable } from './harness.mjs'
import { interleaved } from './lib/interleaved.mjs'
import { zipfSampler } from '../test/hotkeys/zipf-stream.mjs'

const require = createRequire(import.meta.url)
const { HeavyKeeper } = require('../dist/cjs')

const STREAM = Number(process.env.HOTKEYS_STREAM ?? 2_000_000)
const ROUNDS = Number(process.env.HOTKEYS_ROUNDS ?? 15)
const SEED = 20250912
const keyTable = (distinct) => Array.from({ length: distinct }, (_, rank) => `key:${String(rank).padStart(12, '0')}`)

// Each case gets its own function compiled from source, so that each call site sees one structure only.
const compile = (body, ...names) => new Function(...names, 'S', `let i = 0; return () => { ${body} }`)

const sets = []
const cases = []
for (const [distinct, label] of [
  [1_000, '1 000 keys (warm)'],
  [1_000_000, '1 000 000 keys (cold)'],
]) {
  const keys = keyTable(distinct)
  for (const s of [1.0, 1.2]) {
    const next = zipfSampler({ s, v: 1, n: distinct, seed: SEED })
    const ranks = new Uint32Array(STREAM)
    for (let i = 0; i < STREAM; i++) ranks[i] = next()
    const hk = new HeavyKeeper({ k: 100, width: 4096, seed: SEED })
    const map = new Map()
    let inTopK = 0
    for (let i = 0; i < STREAM; i++) {
      const key = keys[ranks[i]]
      if (hk.add(key)) inTopK++
      map.set(key, (map.get(key) ?? 0) + 1)
    }
    const set = `Zipf ${s.toFixed(1)}, ${label}`
    sets.push({ set, inTopK: inTopK / STREAM })
    const at = 'keys[ranks[i++ % S]]'
    cases.push(
      {
        name: `HeavyKeeper.add, ${set}`,
        fn: compile(`return hk.add(${at})`, 'hk', 'keys', 'ranks')(hk, keys, ranks, STREAM),
      },
      {
        name: `exact Map count, ${set}`,
        fn: compile(`const key = ${at}; map.set(key, (map.get(key) ?? 0) + 1)`, 'map', 'keys', 'ranks')(
          map,
          keys,
          ranks,
          STREAM,
        ),
      },
      {
        name: `read the key, ${set}`,
        fn: compile(`return ${at}.charCodeAt(15)`, 'keys', 'ranks')(keys, ranks, STREAM),
      },
    )
  }
}

const load = () => os.loadavg()[0].toFixed(1)
const loadBefore = load()
const results = await interleaved(cases, { rounds: ROUNDS, roundMs: 20 })
const ns = (name) => results.get(name).ns
const fmt = (v) => `${v.toFixed(1)} ns`
const lines = sets.map(({ set, inTopK }) => {
  const ours = ns(`HeavyKeeper.add, ${set}`)
  const map = ns(`exact Map count, ${set}`)
  const ok = ours <= 100 && ours <= 1.25 * map
  return [
    set,
    fmt(ours),
    fmt(map),
    `${(ours / map).toFixed(2)}x`,
    fmt(ns(`read the key, ${set}`)),
    `${(inTopK * 100).toFixed(0)} %`,
    ok ? 'met' : 'MISSED',
  ]
})
writeTable(
  'Hot keys: HeavyKeeper.add beside an exact Map count',
  [
    'stream',
    'HeavyKeeper.add',
    'exact Map count',
    'HeavyKeeper / Map',
    'reading the key only',
    'adds of a key in the top 100',
    '<= 100 ns and <= 1.25x the Map',
  ],
  lines,
  {
    note:
      `k = 100, width 4096, depth 4; ${STREAM.toLocaleString('en-US')}-event streams of 16-byte keys from a table; ` +
      `CPU time, median of ${ROUNDS} interleaved rounds; load average ${loadBefore} before, ${load()} after ` +
      `(2 cores: above 2 the machine was busy, read the ratios).`,
  },
)
