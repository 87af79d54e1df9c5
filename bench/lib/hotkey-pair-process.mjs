// One Zipf stream's HeavyKeeper.add beside an exact Map count, alone in this process (bench/peers.bench.mjs starts
// several per stream and says why). Prints one line of JSON: ns per event of HeavyKeeper (`ours`) and of the Map
// (`peer`), each the median of interleaved rounds in CPU time.
//   node bench/lib/hotkey-pair-process.mjs <zipf s> <distinct keys> [rounds] [roundMs]
import { createRequire } from 'module'
import { interleaved } from './interleaved.mjs'
import { hotKeyPair } from './hotkey-pair.mjs'

const require = createRequire(import.meta.url)
const { HeavyKeeper } = require('../../dist/cjs')

const [s, distinct, rounds = '15', roundMs = '20'] = process.argv.slice(2).map(Number)
if (!(s > 0) || !(distinct > 0)) {
  console.error('usage: hotkey-pair-process.mjs <zipf s> <distinct keys> [rounds] [roundMs]')
  process.exit(2)
}
const [ours, map] = hotKeyPair(HeavyKeeper, s, distinct)
const results = await interleaved([ours, map], { rounds, roundMs })
process.stdout.write(`${JSON.stringify({ ours: results.get(ours.name).ns, peer: results.get(map.name).ns })}\n`)
