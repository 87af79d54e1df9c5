import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'

export interface TopArgs {
  /** Region or shared names to show (`*` matches anything); empty for every region. */
  names: string[]
  /** Seconds between refreshes. */
  interval: number
  /** Sample twice, `interval` apart, print one frame (with rates) and exit. */
  once: boolean
  /** One JSON object per frame instead of the table. */
  json: boolean
  /** Hot keys shown per top-k. */
  keys: number
}

export const TOP_USAGE = `Usage: bulwark top [name ...] [--interval <seconds>] [--keys <n>] [--once] [--json]

Shows the bulwark limiters, breakers, rate limiters and hot keys shared on this host, refreshed live. It reads
their shared memory without joining it. Names select regions by their \`shared\` name or full region name
(\`*\` matches anything); without names, every region is shown.

  --interval <s>  seconds between refreshes (default 1)
  --keys <n>      hot keys shown per top-k (default 5)
  --once          print one frame (rates measured over one interval) and exit
  --json          print frames as JSON, one per line

Keys: q or Ctrl-C quits, space refreshes now.`

function numberAfter(argv: readonly string[], i: number, flag: string, min: number, max: number): number {
  const raw = argv[i + 1]
  const value = raw === undefined ? NaN : Number(raw)
  if (!(value >= min && value <= max)) throw new InvalidArgumentError(flag, raw, `a number from ${min} to ${max}`)
  return value
}

/** Parses `bulwark top`'s arguments (after the command). */
export function parseTopArgs(argv: readonly string[]): TopArgs {
  const args: TopArgs = { names: [], interval: 1, once: false, json: false, keys: 5 }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--once') args.once = true
    else if (arg === '--json') args.json = true
    else if (arg === '--interval' || arg === '-d') args.interval = numberAfter(argv, i++, arg, 0.05, 3600)
    else if (arg === '--keys') args.keys = Math.floor(numberAfter(argv, i++, arg, 0, 1000))
    else if (arg.startsWith('-'))
      throw new InvalidArgumentError('option', arg, 'one of --interval, --keys, --once, --json')
    else args.names.push(arg)
  }
  return args
}
