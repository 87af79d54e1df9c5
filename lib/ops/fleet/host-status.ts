import { threadId } from 'worker_threads'

import {
  type FleetRegion,
  NUMBER,
  type RulesRefusal,
  type WatcherStatus,
} from '../../foundation/live-rules/fleet-region'
import type { HostIdentity } from './host-rules'

const KEPT_REFUSALS = 10

/** The watcher's view of the host's status, written to the region whenever it changes. */
export class HostStatus {
  private status: WatcherStatus

  constructor(
    private readonly region: FleetRegion,
    source: string,
    identity: HostIdentity,
  ) {
    this.status = {
      source,
      host: identity.host,
      labels: { ...identity.labels },
      watcher: { pid: process.pid, threadId },
      canary: false,
      refusals: [],
    }
    this.write()
  }

  get current(): Readonly<WatcherStatus> {
    return this.status
  }

  refused(refusal: RulesRefusal): void {
    this.region.setNumber(NUMBER.refused, this.region.number(NUMBER.refused) + 1)
    this.status.refusals = [...this.status.refusals, refusal].slice(-KEPT_REFUSALS)
    this.write()
  }

  update(change: Partial<Omit<WatcherStatus, 'refusals'>>): void {
    this.status = { ...this.status, ...change }
    this.write()
  }

  private write(): void {
    this.region.status.write(JSON.stringify(this.status))
  }
}
