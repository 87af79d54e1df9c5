// BULWARK_RULES=<url>: the process follows that fleet rule source (docs/readme/fleet.md) with no code change. Every
// public entry imports this module; when the variable is set, it registers an attach hook that starts the process's
// follower when its first shared component with live rules, or its first switchboard, attaches to its region. The
// fleet's code is loaded then, not before: it is the 'bulwark/fleet' entry, required by the package's own name so
// that the build keeps it in that entry's file, out of the chunks every entry loads. A process that makes no such
// component never loads it.
import { addAttachHook } from '../foundation/live-rules/attach-hooks'

const url = process.env.BULWARK_RULES
if (url !== undefined && url !== '') {
  const remove = addAttachHook(() => {
    remove()
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first attach, not before
      const fleet = require('bulwark/fleet') as typeof import('../ops/fleet/rules-follower')
      // The follower registers its own hooks, which the registry's iteration visits for this very region.
      if (fleet.rulesFollower() === undefined) fleet.followRules({ rules: url })
    } catch (error) {
      // A URL that does not parse, or a source that cannot be followed: said once, and the components work as they
      // would without a source.
      const message = error instanceof Error ? error.message : String(error)
      process.emitWarning(`BULWARK_RULES: ${message}`, 'BulwarkWarning')
    }
  })
}
