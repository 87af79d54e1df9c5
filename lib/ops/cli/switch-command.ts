import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { defaultNamespace, splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { printableTime } from '../top/printable'
import { designates } from './set-command'
import { checkSwitch, type SwitchMode, Switchboard } from '../../components/switches/switchboard'

export const SWITCHES_USAGE = `Usage: bulwark set switches.<board> <target>=<mode> ...
       bulwark set switches.<board>            (lists the board's switches)

Switches (docs/guide/degrade.md, "Manual switches"), applied by every process of the host that has the board
open, at its next request, until they are cleared:
  breaker:<shared name>=open|closed     force a breaker open (refuse every call) or closed (let every call through)
  priority:<class>=shed|fallback        shed a class (critical, high, normal, low), or answer it from the fallback
  route:<route>=shed|fallback           the same for a route (as the guard's route option names it)
  <target>=clear                        clear one switch; clear=all clears every switch of the board

Examples:
  bulwark set switches.api priority:low=shed
  bulwark set switches.api breaker:payments=open route:/recommendations=fallback
  bulwark set switches.api route:/recommendations=clear`

/**
 * `target=mode`, `target=clear` and `clear=all` pairs, each checked as the switchboard checks it (an Error naming
 * the pair when one is bad): what `bulwark set switches.<board>` takes, on one host or through a rule source.
 */
export function parseSwitchPairs(pairs: readonly string[]): {
  changes: Record<string, SwitchMode | null>
  clearAll: boolean
} {
  const changes: Record<string, SwitchMode | null> = {}
  let clearAll = false
  for (const pair of pairs) {
    const eq = pair.lastIndexOf('=')
    const target = eq > 0 ? pair.slice(0, eq) : ''
    const mode = eq > 0 ? pair.slice(eq + 1) : ''
    if (target === 'clear' && mode === 'all') {
      clearAll = true
      continue
    }
    try {
      checkSwitch(target, mode === 'clear' ? null : mode)
    } catch (error) {
      throw new InvalidArgumentError('switch', pair, `target=mode (${(error as Error).message})`)
    }
    changes[target] = mode === 'clear' ? null : (mode as SwitchMode)
  }
  return { changes, clearAll }
}

/** `bulwark set switches.<board> ...`: changes a host's switchboard, validated whole before anything changes. */
export function setSwitches(args: readonly string[], out: (text: string) => void): number {
  const [region, ...pairs] = args
  if (region === undefined || !region.startsWith('switches.')) {
    out(`bulwark set: name a switchboard region, switches.<board>\n\n${SWITCHES_USAGE}\n`)
    return 2
  }
  // A board that no process holds would vanish with this command: the switch would reach nobody.
  // The full region name, or `switches.<board>` for a board of this command's namespace (docs/guide/trust.md).
  const boards = listRegions().filter((r) => splitRegionName(r).kind === 'switches')
  const here = defaultNamespace()
  const found = boards.filter((r) => designates(r, region, here))
  if (found.length !== 1) {
    const others = boards.filter((r) => designates(r, region, splitRegionName(r).namespace))
    out(
      found.length > 1
        ? `bulwark set: '${region}' names several switchboards: name one of ${found.join(', ')}\n`
        : others.length > 0
          ? `bulwark set: no switchboard '${region}' in this namespace (${here}); another application's is named in full: ${others.join(', ')}\n`
          : `bulwark set: no process of this host has the switchboard '${region}' open (bulwark top lists them)\n`,
    )
    return 1
  }
  let parsed: { changes: Record<string, SwitchMode | null>; clearAll: boolean }
  try {
    parsed = parseSwitchPairs(pairs)
  } catch (error) {
    out(`bulwark set: ${(error as Error).message}\n\n${SWITCHES_USAGE}\n`)
    return 2
  }
  const { changes, clearAll } = parsed
  const { namespace, shared } = splitRegionName(found[0])
  const board = new Switchboard({ shared, namespace: namespace || undefined })
  try {
    if (clearAll) board.clearAll()
    board.configure(changes) // validated above: applied whole
    const active = board.list()
    out(
      active.length === 0
        ? `${region}: no switch\n`
        : active.map((s) => `${region}: ${s.target}=${s.mode} since ${printableTime(s.since)}\n`).join(''),
    )
    return 0
  } finally {
    board.close()
  }
}
