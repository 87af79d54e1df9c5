// BULWARK_RULES=<url>: the process follows that fleet rule source (docs/readme/fleet.md) with no code change. Every
// public entry requires this module at load when the variable is set (and only then); it registers an attach hook
// that starts the process's follower when its first shared component with live rules, or its first switchboard,
// attaches to its region. The fleet's code is loaded then, not before: a process that makes no such component never
// loads it.
import { addAttachHook } from '../foundation/live-rules/attach-hooks'

const url = process.env.BULWARK_RULES
if (url !== undefined && url !== '') {
  const remove = addAttachHook(() => {
    remove()
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded here only: its own pack (scripts/build-ts.js)
    const fleet = require('../ops/fleet/follow-env') as typeof import('../ops/fleet/follow-env') // bulwark:separate
    fleet.followFromEnv(url) // registers the follower's own hooks, which answer for this region too
  })
}
