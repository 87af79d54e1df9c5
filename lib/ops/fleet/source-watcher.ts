import type { Disposable } from '../../foundation/common/disposable'
import type { FleetRegion } from '../../foundation/live-rules/fleet-region'
import { NUMBER, RULES_BYTES } from '../../foundation/live-rules/fleet-region'
import type { HostApplier, Refusal } from './host-applier'
import { type HostIdentity, type HostRules, hostRules, NO_RULES } from './host-rules'
import { HostStatus } from './host-status'
import type { LastGoodStore } from './last-good'
import { parseRuleDocument, type RuleDocument } from './rule-document'
import type { RuleSource, SourceDocument } from './rule-source'

export interface WatcherContext {
  region: FleetRegion
  source: RuleSource
  identity: HostIdentity
  applier: HostApplier
  store: LastGoodStore | undefined
  /** Wall clock, ms (staleness and reports are in wall time: hosts and operators compare them). */
  now: () => number
  log: (line: string) => void
  /** How long a host's report stays in the source. */
  reportTtl: number
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The host rules a region holds, or NO_RULES. */
export function readHostRules(region: FleetRegion): HostRules {
  const read = region.rules.read()
  if (read === undefined || read.text === '') return NO_RULES
  try {
    return JSON.parse(read.text) as HostRules
  } catch {
    return NO_RULES
  }
}

/**
 * What the host's watcher does while its member leads (docs/readme/fleet.md): follows the source, checks each
 * document whole, writes the host's rules to the region and applies them, keeps the last good document on disk, and
 * says how it goes (the region's numbers and status, a log line per change or refusal, a report to the source).
 * A document that fails its checks is never applied: the host keeps the last good one.
 */
export class SourceWatcher {
  private readonly status: HostStatus
  private current: HostRules
  private subscription: Disposable | undefined
  private lastText: string | undefined
  private lastRevision = -1
  private backwards = 0
  private reading = false
  private up: boolean | undefined
  private lastReport = -Infinity

  constructor(private readonly c: WatcherContext) {
    this.status = new HostStatus(c.region, c.source.description, c.identity)
    this.current = readHostRules(c.region)
    c.region.setNumber(NUMBER.leaderSince, c.now())
  }

  /**
   * Takes over the host: a host that obeys nothing yet starts from the last good document on disk; otherwise the
   * rules the region holds are applied again (a new watcher makes sure of them). Synchronous, so that components made
   * next find them. Then follows the source.
   */
  start(): void {
    const kept = this.current.version === 0 ? this.c.store?.read() : undefined
    if (kept !== undefined) {
      try {
        const doc = parseRuleDocument(kept.text)
        this.c.region.setNumber(NUMBER.fromDisk, 1)
        const origin = ` from ${this.c.store?.file} (saved ${new Date(kept.savedAt).toISOString()}) until the source answers`
        this.accept(doc, hostRules(doc, this.c.identity), kept.savedAt, origin)
      } catch (error) {
        this.c.log(`ignored the last good rules on disk: ${message(error)}`)
      }
    } else if (this.current.version > 0) {
      this.report(this.c.applier.apply(NO_RULES, this.current, true), this.current.version)
    }
    this.subscription = this.c.source.watch(
      (doc) => this.onDocument(doc),
      (error) => this.down(error),
    )
  }

  /** The timer's work (every check interval): read the source (nothing depends on a notification arriving), give
   * the rules to regions made meanwhile, report to the source. */
  tick(): void {
    this.report(this.c.applier.reconcile(this.current), this.current.version)
    if (!this.reading) {
      this.reading = true
      this.c.source.read().then(
        (doc) => {
          this.reading = false
          if (doc === undefined) this.confirm()
          else this.onDocument(doc, true)
        },
        (error: unknown) => {
          this.reading = false
          this.down(error)
        },
      )
    }
    if (this.c.now() - this.lastReport >= this.c.reportTtl / 3) this.sendReport()
  }

  /** Tells the source how this host is (at least every third of the report's time to live, and after a change). */
  private sendReport(): void {
    if (this.c.source.report === undefined) return
    this.lastReport = this.c.now()
    this.c.source
      .report(this.c.identity.host, JSON.stringify(this.hostReport()), this.c.reportTtl)
      .catch(() => undefined)
  }

  /** Whether the source stopped answering: the follower then checks it more often, to hear it back soon. */
  get sourceDown(): boolean {
    return this.up === false
  }

  stop(): void {
    this.subscription?.dispose()
    this.subscription = undefined
  }

  /** What this host tells the source about itself (`bulwark rules status --source`). */
  hostReport(): object {
    const r = this.c.region
    const s = this.status.current
    return {
      host: s.host,
      labels: s.labels,
      version: r.number(NUMBER.version),
      canary: s.canary,
      confirmedAt: r.number(NUMBER.confirmedAt),
      refused: r.number(NUMBER.refused),
      lastRefusal: s.refusals[s.refusals.length - 1],
      watcher: s.watcher,
      at: this.c.now(),
    }
  }

  private onDocument(doc: SourceDocument, fromRead = false): void {
    if (doc.text === this.lastText) return this.confirm()
    // An older revision than one already seen: a late answer, unless the source keeps saying it (it was reset).
    if (doc.revision < this.lastRevision && (!fromRead || ++this.backwards < 2)) return
    this.backwards = 0
    this.lastRevision = doc.revision
    this.lastText = doc.text
    this.confirm()
    let parsed: RuleDocument
    try {
      parsed = parseRuleDocument(doc.text)
    } catch (error) {
      const reason = message(error)
      this.status.refused({ version: versionGuess(doc.text), reason, at: this.c.now() })
      this.c.log(
        `refused the document from ${this.c.source.description}: ${reason}; keeps version ${this.current.version}`,
      )
      return
    }
    const next = hostRules(parsed, this.c.identity)
    const changed = JSON.stringify(next) !== JSON.stringify(this.current)
    const fromDisk = this.c.region.number(NUMBER.fromDisk) === 1
    if (changed) this.accept(parsed, next, this.c.now())
    this.c.region.setNumber(NUMBER.fromDisk, 0)
    if (!changed && !fromDisk) return
    this.c.store
      ?.write({ text: doc.text, savedAt: this.c.now(), source: this.c.source.description })
      .catch((error) => this.c.log(`could not keep the rules on disk: ${message(error)}`))
  }

  /** Writes `next` (the host's rules of `doc`) to the region and applies them; `confirmedAt`: when the source said them. */
  private accept(doc: RuleDocument, next: HostRules, confirmedAt: number, origin = ''): void {
    const r = this.c.region
    if (!r.rules.write(JSON.stringify(next))) {
      const reason = `the host's rules are larger than the region holds (${RULES_BYTES} bytes)`
      this.status.refused({ version: doc.version, reason, at: this.c.now() })
      this.c.log(`refused version ${doc.version}: ${reason}`)
      return
    }
    const previous = this.current
    this.current = next
    r.setNumber(NUMBER.version, doc.version)
    r.setNumber(NUMBER.changedAt, this.c.now())
    r.setNumber(NUMBER.confirmedAt, confirmedAt)
    r.setNumber(NUMBER.applied, r.number(NUMBER.applied) + 1)
    const last = doc.history[doc.history.length - 1]
    this.status.update({ canary: next.canary, author: last?.author, time: last?.time })
    const refusals = this.c.applier.apply(previous, next, previous.version === 0)
    const by = last === undefined ? '' : ` (${last.action} by ${last.author}${last.message ? `: ${last.message}` : ''})`
    this.c.log(`obeys version ${doc.version}${by}${next.canary ? ' as a canary host' : ''}${origin}`)
    this.report(refusals, doc.version)
    this.sendReport()
  }

  private report(refusals: Refusal[], version: number): void {
    for (const refusal of refusals) {
      this.status.refused({ version, ...refusal, at: this.c.now() })
      this.c.log(`refused ${refusal.component} on ${refusal.region} (version ${version}): ${refusal.reason}`)
    }
  }

  private confirm(): void {
    const r = this.c.region
    r.setNumber(NUMBER.confirmedAt, this.c.now())
    r.setNumber(NUMBER.sourceUp, 1)
    if (this.up === false) this.c.log(`${this.c.source.description} answers again`)
    if (this.up !== true) this.status.update({ lastError: undefined })
    this.up = true
  }

  private down(error: unknown): void {
    this.c.region.setNumber(NUMBER.sourceUp, 0)
    if (this.up !== false) {
      const since = this.c.region.number(NUMBER.confirmedAt)
      this.c.log(
        `${this.c.source.description} does not answer (${message(error)}): keeps version ${this.current.version}` +
          (since > 0 ? `, confirmed ${new Date(since).toISOString()}` : ''),
      )
      this.status.update({ lastError: message(error) })
    }
    this.up = false
  }
}

/** The version a document that failed its checks says it is (for the report), or -1. */
function versionGuess(text: string): number {
  const match = /"version"\s*:\s*(\d{1,15})/.exec(text.slice(0, 200))
  return match === null ? -1 : Number(match[1])
}
