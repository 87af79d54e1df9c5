// The undici majors installed for the tests (npm aliases), each loaded only where its engines allow, and what the
// running Node's own fetch speaks. undici's two handler APIs and which of them each piece speaks are in
// docs/guide/integrations.md ("undici handler APIs").
import type * as Undici from 'undici'

export type UndiciModule = typeof Undici

export interface UndiciMajor {
  major: 6 | 7 | 8
  undici: UndiciModule
}

function nodeAtLeast(version: string): boolean {
  const have = process.versions.node.split('.').map(Number)
  const want = version.split('.').map(Number)
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i]
  return true
}

/* eslint-disable @typescript-eslint/no-require-imports */
const candidates: Array<[UndiciMajor['major'], string, () => UndiciModule]> = [
  [8, '22.19.0', () => require('undici')],
  [7, '20.18.1', () => require('undici-v7')],
  [6, '18.17.0', () => require('undici-v6')],
]
/* eslint-enable @typescript-eslint/no-require-imports */

/** The majors that run on this Node, newest first. */
export const undiciMajors: UndiciMajor[] = candidates
  .filter(([, minimum]) => nodeAtLeast(minimum))
  .map(([major, , load]) => ({ major, undici: load() }))

/** The major of the undici bundled in Node, which its global fetch is. */
export const nodeFetchMajor = Number(process.versions.undici?.split('.')[0] ?? 0)

/**
 * Whether Node's fetch can use an Agent of `major` given as `{ dispatcher }`: undici 8 speaks only the controller
 * API, undici 6 only the callback API, undici 7 both; Node's fetch speaks the controller API from undici 8 on.
 */
export function nodeFetchFits(major: number): boolean {
  return nodeFetchMajor >= 8 ? major >= 7 : major <= 7
}

/**
 * Whether `setGlobalDispatcher` of `major` reaches Node's fetch: undici 8's fetch reads only the dispatcher that
 * undici 7 and 8 publish (undici 6 publishes only the one older fetches read; undici 8 publishes both).
 */
export function nodeFetchSeesGlobal(major: number): boolean {
  return nodeFetchMajor >= 8 ? major >= 7 : true
}
