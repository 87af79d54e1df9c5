import { BulwarkError } from '../../foundation/errors/bulwark-error'
import { printableLines } from '../top/printable'
import * as rules from './rules-command'
import * as sourceSet from './source-set-command'
import { SET_USAGE, setRule } from './set-command'
import { GC_USAGE, runGc } from './gc-command'
import { parseTopArgs, TOP_USAGE } from '../top/top-args'
import { runTop } from '../top/top-command'
import { setSwitches, SWITCHES_USAGE } from './switch-command'
import { ROUTING_USAGE, setRoutingHere } from './routing-command'

const USAGE = `Usage: bulwark <command>

Commands:
  top     live view of the limiters, breakers, rate limiters and hot keys shared on this host
  set     change a shared component's live rule, or an operators' switchboard, on every process of the host,
          or with --source on every host of the fleet ('bulwark set --help')
  rules   the fleet's rule source: status, history, rollback, promote, abort ('bulwark rules --help')
  gc      remove the shared regions no live process uses (left behind by killed processes)
          ('bulwark gc --help' for its options: --namespace, --all-users)
  help    this text ('bulwark top --help' for top's options)`

// What the commands print holds names and messages read from shared memory and /dev/shm: escaped for the terminal.
const say = (text: string) => process.stdout.write(printableLines(text))
const complain = (text: string) => process.stderr.write(printableLines(text))

/** The `bulwark` command line. Resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`)
    return command === undefined ? 2 : 0
  }
  if (command === 'gc') {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${GC_USAGE}\n`)
      return 0
    }
    try {
      return runGc(rest)
    } catch (error) {
      complain(`bulwark gc: ${error instanceof Error ? error.message : String(error)}\n\n${GC_USAGE}\n`)
      return 2
    }
  }
  if (command === 'set') return rest.includes('--source') ? fleet('set', rest) : set(rest)
  if (command === 'rules') return fleet('rules', rest)
  if (command !== 'top') {
    process.stderr.write(`bulwark: unknown command '${command}'\n${USAGE}\n`)
    return 2
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${TOP_USAGE}\n`)
    return 0
  }
  try {
    return await runTop(parseTopArgs(rest))
  } catch (error) {
    if (!(error instanceof BulwarkError)) throw error
    complain(`bulwark top: ${error.message}\n\n${TOP_USAGE}\n`)
    return 2
  }
}

/** `bulwark set --source ...` and `bulwark rules ...`: through the fleet's rule source. */
async function fleet(command: 'set' | 'rules', args: readonly string[]): Promise<number> {
  const usage = command === 'set' ? sourceSet.SOURCE_SET_USAGE : rules.RULES_USAGE
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${usage}\n`)
    return args.length === 0 ? 2 : 0
  }
  // What a source holds (authors, names, reasons) was written by others: escaped as the region's text is.
  try {
    return await (command === 'set' ? sourceSet.setThroughSource(args, say) : rules.runRules(args, say))
  } catch (error) {
    const bad = error instanceof BulwarkError
    complain(`bulwark ${command}: ${error instanceof Error ? error.message : String(error)}\n`)
    return bad ? 2 : 1
  }
}

function set(args: readonly string[]): number {
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${SET_USAGE}\n\n${SWITCHES_USAGE}\n\n${ROUTING_USAGE}\n\n${sourceSet.SOURCE_SET_USAGE}\n`)
    return args.length === 0 ? 2 : 0
  }
  // Switches hold names, not numbers: a switchboard has its own parser, the same validation as configure().
  try {
    if (args[0].startsWith('switches.')) return setSwitches(args, say)
    if (args[0].startsWith('routing.')) return setRoutingHere(args, say)
    const { region, version, values } = setRule(args[0], args.slice(1))
    const fields = Object.entries(values).map(([field, value]) => `${field}=${value}`)
    say(`${region}: rule version ${version}: ${fields.join(' ')}\n`)
    return 0
  } catch (error) {
    if (!(error instanceof BulwarkError)) throw error
    complain(`bulwark set: ${error.message}\n`)
    return 2
  }
}
