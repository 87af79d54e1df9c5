import { threadId } from 'worker_threads'

import type { FleetRegion } from './fleet-region'
import { NUMBER } from './fleet-region'
import type { HostIdentity } from './host-rules'

/** A refusal as the status keeps it (the newest few). */
export interface RulesRefusal {
  /** The document's version refused, or whose rule was refused on this host. */
  version: number
  component?: string
  region?: string
  reason: string
  /** Date.now(). */
  at: number
}

/** What the watcher says about itself in the host's region (JSON in its status block). */
export interface WatcherStatus {
  source: string
  host: string
  labels: Record<string, string>
  watcher: { pid: number; threadId: number }
  /** Of the document the host obeys: its last change's author and time, and whether the host takes its canary. */
  author?: string
  time?: string
  canary: boolean
  lastError?: string
  refusals: RulesRefusal[]
}

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

/** The status a region holds, or undefined (none yet, or not readable). */
export function readStatus(region: FleetRegion): WatcherStatus | undefined {
  const read = region.status.read()
  if (read === undefined || read.text === '') return undefined
  try {
    return JSON.parse(read.text) as WatcherStatus
  } catch {
    return undefined
  }
}
