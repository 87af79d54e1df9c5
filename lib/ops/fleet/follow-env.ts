import { rulesFollower, followRules } from './rules-follower'

/**
 * BULWARK_RULES: the process follows that source for its namespace (docs/readme/fleet.md), started by the entry
 * points' attach hook (lib/entries/rules-env.ts) when its first shared component with live rules or switches
 * attaches. A URL that does not parse, or a source that cannot be followed, is said once as a warning: the
 * components work as they would without a source.
 */
export function followFromEnv(url: string): void {
  try {
    if (rulesFollower() === undefined) followRules({ rules: url })
  } catch (error) {
    process.emitWarning(`BULWARK_RULES: ${error instanceof Error ? error.message : String(error)}`, 'BulwarkWarning')
  }
}
