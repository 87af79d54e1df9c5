import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { nestRule } from '../../foundation/live-rules/live-rules'
import { addAttachHook, type RegionAttach } from '../../foundation/live-rules/attach-hooks'
import { splitRegionName } from '../../foundation/regions/namespace'
import { preciseNow } from '../../foundation/signals/clock'
import { registerComponent, reportAutomatically } from '../../foundation/common/component-registry'
import { FleetRegion, NUMBER, readStatus, type RulesFollowerStats } from '../../foundation/live-rules/fleet-region'
import { type FollowRulesOptions, type ResolvedFollowOptions, resolveFollowOptions } from './follower-options'
import { HostApplier } from './host-applier'
import { HostElection } from './host-election'
import { entryFor, entryRule, type HostRules } from './host-rules'
import { LastGoodStore } from './last-good'
import { openRuleSource, splitSourceUrl } from './open-source'
import type { RuleSource } from './rule-source'
import { readHostRules, SourceWatcher } from './source-watcher'
import { ThreadRuleSource } from './thread-rule-source'

export type { FollowRulesOptions } from './follower-options'
export type { RulesFollowerStats } from '../../foundation/live-rules/fleet-region'

const followers = new Map<string, RulesFollower>()
/** Removes the attach hook, registered while this thread has a follower. */
let removeHook: (() => void) | undefined

/**
 * The attach hook: a component's new region takes its rule, a new board its switches, a new router's region its
 * rules, from its namespace's.
 */
function regionAttached(attach: RegionAttach): void {
  if (!attach.created) return // an existing region has the host's rules already
  const { kind, namespace, shared } = splitRegionName(attach.region)
  const follower = followers.get(namespace)
  if (follower === undefined) return
  if (attach.kind === 'rules') return follower.give(kind, shared, attach.apply)
  if (attach.kind === 'routing') {
    const rules = follower.hostRules().routing?.[shared]
    if (rules !== undefined) attach.apply(rules)
    return
  }
  const board = follower.hostRules().switches[shared]
  if (board !== undefined && Object.keys(board).length > 0) attach.apply(board)
}

/**
 * Follows a fleet's rule source for one application on this host (docs/readme/fleet.md). Every follower joins the
 * host's fleet region; one of them, elected there, watches the source and makes the host's regions obey it; the
 * others only give a region they make the rules in force. Made by BULWARK_RULES or followRules().
 */
export class RulesFollower {
  readonly namespace: string
  private readonly o: ResolvedFollowOptions
  private readonly region: FleetRegion
  private readonly election: HostElection
  private readonly applier: HostApplier
  private readonly timer: NodeJS.Timeout
  private watcher: SourceWatcher | undefined
  private source: RuleSource | undefined
  private lastCheck = -Infinity
  /** When this member may try again to open a source that would not open, and what it said (said once). */
  private retryAt = -Infinity
  private openError = ''
  private cached: { sequence: number; rules: HostRules } | undefined
  private refusedHere = 0
  private closed = false
  private readonly unreport: () => void

  constructor(options: FollowRulesOptions) {
    this.o = resolveFollowOptions(options)
    this.namespace = this.o.namespace
    if (followers.has(this.namespace))
      throw new InvalidArgumentError(
        'namespace',
        this.namespace,
        'a namespace no other follower of this thread follows',
      )
    this.region = FleetRegion.open(this.namespace, this.o.maxMembers)
    this.election = new HostElection(this.region, this.o.now ?? preciseNow, this.o.staleAfter)
    this.applier = new HostApplier(this.namespace)
    followers.set(this.namespace, this)
    removeHook ??= addAttachHook(regionAttached)
    // The metrics exporters report it with no code: nobody's code made it.
    this.unreport = reportAutomatically(this, this.namespace)
    this.tick() // the first member of the host leads at once, and obeys the last good rules before any component
    this.timer = setInterval(() => this.tick(), Math.min(100, this.o.checkInterval))
    this.timer.unref()
  }

  /** Whether this member watches the source for the host. */
  get watching(): boolean {
    return this.watcher !== undefined
  }

  /** @internal The rules and switches the host obeys now. */
  hostRules(): HostRules {
    const sequence = this.region.rules.sequence
    if (this.cached?.sequence !== sequence) this.cached = { sequence, rules: readHostRules(this.region) }
    return this.cached.rules
  }

  /**
   * The shadow flag the source sets for a component (`bbr.api`), or undefined when it sets none: the host's
   * components of that name decide in shadow mode while it is true (docs/rules/shadow.md).
   */
  shadow(component: string): boolean | undefined {
    return this.hostRules().components[component]?.shadow
  }

  stats(): RulesFollowerStats {
    const r = this.region
    const status = readStatus(r)
    const confirmedAt = r.number(NUMBER.confirmedAt)
    return {
      namespace: this.namespace,
      source: status?.source ?? '',
      watching: this.watching,
      watcherPid: status?.watcher.pid,
      version: r.number(NUMBER.version),
      canary: this.hostRules().canary,
      sourceUp: r.number(NUMBER.sourceUp) === 1,
      staleMs: confirmedAt > 0 ? Math.max(0, this.o.wallClock() - confirmedAt) : Infinity,
      fromDisk: r.number(NUMBER.fromDisk) === 1,
      refused: r.number(NUMBER.refused),
      applied: r.number(NUMBER.applied),
      refusedHere: this.refusedHere,
    }
  }

  /** Stops following: another member of the host takes the watch over. Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.timer)
    this.stopWatching()
    this.election.resign()
    this.region.close()
    followers.delete(this.namespace)
    this.unreport()
    if (followers.size === 0) {
      removeHook?.()
      removeHook = undefined
    }
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** @internal Gives the rule in force for `kind.shared` to a region just made. */
  give(kind: string, shared: string, adopt: (rule: object) => void): void {
    const rules = entryRule(entryFor(this.hostRules(), kind, shared))
    if (rules === undefined) return
    try {
      adopt(nestRule(rules))
    } catch {
      this.refusedHere++ // the watcher's pass over new regions reports it
    }
  }

  private tick(): void {
    if (this.closed) return
    if (this.source instanceof ThreadRuleSource && this.source.dead) this.stopWatching() // opened again below
    const leads = this.election.tick()
    if (leads && this.watcher === undefined) this.startWatching()
    else if (!leads && this.watcher !== undefined) this.stopWatching()
    const now = this.o.wallClock()
    // A source that stopped answering is asked four times as often, so that the host hears it back soon.
    const every = this.watcher?.sourceDown ? this.o.checkInterval / 4 : this.o.checkInterval
    if (this.watcher !== undefined && now - this.lastCheck >= every) {
      this.lastCheck = now
      this.watcher.tick()
    }
  }

  private startWatching(): void {
    const now = this.o.wallClock()
    if (now < this.retryAt) return this.election.resign()
    try {
      this.source = this.o.source ?? openUrl(this.o.url as string, this.namespace)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      if (reason !== this.openError) this.o.log(`cannot open the rule source: ${reason}`)
      this.openError = reason
      this.retryAt = now + this.o.checkInterval
      this.election.resign() // another member may do better; this one tries again after a check interval
      return
    }
    this.openError = ''
    this.watcher = new SourceWatcher({
      region: this.region,
      source: this.source,
      identity: { host: this.o.host, labels: this.o.labels },
      applier: this.applier,
      store: this.o.cacheDir === undefined ? undefined : new LastGoodStore(this.o.cacheDir, this.namespace),
      now: this.o.wallClock,
      log: this.o.log,
      reportTtl: Math.max(15_000, this.o.checkInterval * 5),
    })
    this.watcher.start()
    this.lastCheck = -Infinity
  }

  private stopWatching(): void {
    this.watcher?.stop()
    this.watcher = undefined
    // A source of yours is yours to close; one made from a URL is closed with the watch.
    if (this.source !== undefined && this.o.source === undefined) void this.source.close().catch(() => undefined)
    this.source = undefined
  }
}
registerComponent('RulesFollower', RulesFollower)

/**
 * The source a URL names: in a thread of its own when bulwark runs from its build (its connections then never keep
 * the process alive, nor load its event loop), else here.
 */
function openUrl(url: string, namespace: string): RuleSource {
  const ns = splitSourceUrl(url).namespace ?? namespace // checks the URL now, where the error can be said
  return ThreadRuleSource.available() ? new ThreadRuleSource(url, ns) : openRuleSource(url, ns).source
}

/** Starts following a rule source (docs/readme/fleet.md): what BULWARK_RULES does, from code. */
export function followRules(options: FollowRulesOptions): RulesFollower {
  return new RulesFollower(options)
}

/** The follower of `namespace` in this thread (BULWARK_RULES's, or one made by followRules), if any. */
export function rulesFollower(namespace?: string): RulesFollower | undefined {
  return namespace === undefined ? followers.values().next().value : followers.get(namespace)
}
