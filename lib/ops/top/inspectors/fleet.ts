import { FleetRegion, NUMBER, placeFleet, readStatus } from '../../../foundation/live-rules/fleet-region'
import type { RegionSnapshot } from '../region-snapshot'
import type { RulesWatcherView } from '../views'

/** A host's fleet region (`fleet.<namespace>.rules`), read from a snapshot without joining it. */
export function inspectFleet(
  snapshot: RegionSnapshot,
  _now: number,
  _keys: number,
  wallNow = Date.now(),
): RulesWatcherView {
  const placement = placeFleet(snapshot.fingerprint.number('lanes'))
  const fleet = new FleetRegion(snapshot.region(placement.layout), placement)
  const status = readStatus(fleet)
  const leaderSlot = Atomics.load(fleet.i32, fleet.leaderIndex) - 1
  const leader = snapshot.members.find((m) => m.alive && m.slot === leaderSlot)
  const confirmedAt = fleet.number(NUMBER.confirmedAt)
  return {
    type: 'rules-watcher',
    source: status?.source ?? '',
    watcher: leader === undefined ? undefined : (status?.watcher ?? { pid: leader.pid, threadId: leader.threadId }),
    watcherSince: fleet.number(NUMBER.leaderSince),
    followers: snapshot.members.filter((m) => m.alive).length,
    host: status?.host ?? '',
    labels: status?.labels ?? {},
    version: fleet.number(NUMBER.version),
    canary: status?.canary ?? false,
    author: status?.author,
    time: status?.time,
    sourceUp: fleet.number(NUMBER.sourceUp) === 1,
    staleMs: confirmedAt > 0 ? Math.max(0, wallNow - confirmedAt) : Infinity,
    fromDisk: fleet.number(NUMBER.fromDisk) === 1,
    refused: fleet.number(NUMBER.refused),
    applied: fleet.number(NUMBER.applied),
    refusals: status?.refusals ?? [],
    lastError: status?.lastError,
  }
}
