import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { automaticComponents, isComponent } from '../../foundation/common/component-registry'
import { EXPORTED_KINDS, EXPORTED_NAMES, type ExportedKind } from '../kinds/component-kinds'
import { type Labels, type SampleLimits, SAMPLERS } from './component-samplers'
import type { MetricSpec } from './metric-catalog'

/** Options every exporter takes about how many series a component may produce. */
export interface SeriesOptions {
  /**
   * Keys reported per top-k (HeavyKeeper, HotKeyCache), keyed limiter table, hot-parameter or per-key concurrency
   * limiter, the heaviest first, each as a `key` label. Default 0: keys come from requests and can hold personal data (a user id, an
   * email), so they reach a metrics backend only when asked for (docs/guide/trust.md).
   */
  topKeys?: number
  /** Breakers reported per BreakerGroup, those not closed first (default 20). */
  groupKeys?: number
}

export interface Sample {
  spec: MetricSpec
  value: number
  labels: Labels
}

interface Entry {
  name: string
  component: unknown
  kind: ExportedKind
  warned: boolean
}

export function resolveSeriesOptions(o: SeriesOptions): SampleLimits {
  return {
    topKeys: optionalNumber('topKeys', o.topKeys, 0, { integer: true, min: 0, max: 10_000 }),
    groupKeys: optionalNumber('groupKeys', o.groupKeys, 20, { integer: true, min: 0, max: 10_000 }),
  }
}

/**
 * The components an exporter reports, each under a name (unique within its family: limiters, breakers, top-ks,
 * rate limiters, retry budgets). Collection reads each component's stats() once per scrape, however many metrics
 * the scrape asks for: the samples are kept for the synchronous pass that gathered them.
 */
export class MetricComponents {
  private readonly limits: SampleLimits
  private readonly entries = new Map<string, Entry>()
  private cached: Sample[] | undefined

  constructor(options: unknown) {
    this.limits = resolveSeriesOptions(checkOptions<SeriesOptions>(options, 'options'))
  }

  /**
   * Reports `component` under `name` until the returned Disposable is disposed. Takes the components of bulwark
   * (a framework adapter stands for its inbound guard).
   */
  add(name: string, component: unknown): Disposable {
    if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
      throw new InvalidArgumentError('name', name, 'a string of 1-200 characters')
    }
    const target =
      component instanceof Object && isComponent((component as { guard?: unknown }).guard, 'InboundGuard')
        ? (component as { guard: unknown }).guard
        : component
    const kind = EXPORTED_KINDS.find((k) => isComponent(target, k.name))
    if (kind === undefined) throw new InvalidArgumentError('component', component, EXPORTED_NAMES)
    const key = `${kind.family}\u0000${name}`
    if (this.entries.has(key))
      throw new InvalidArgumentError('name', name, `a name no other ${kind.family} component was added under`)
    const entry: Entry = { name, component: target, kind, warned: false }
    this.entries.set(key, entry)
    return toDisposable(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key)
    })
  }

  get size(): number {
    return this.entries.size
  }

  /** Every component's samples, gathered once per synchronous collection pass. */
  samples(): readonly Sample[] {
    if (this.cached === undefined) {
      const samples: Sample[] = []
      for (const entry of this.entries.values()) samples.push(...this.sample(entry))
      for (const [component, name] of automaticComponents()) {
        const kind = EXPORTED_KINDS.find((k) => isComponent(component, k.name))
        const given = [...this.entries.values()].some((e) => e.component === component)
        if (kind !== undefined && !given) samples.push(...this.sample({ name, component, kind, warned: true }))
      }
      this.cached = samples
      queueMicrotask(() => {
        this.cached = undefined
      })
    }
    return this.cached
  }

  private sample(entry: Entry): Sample[] {
    const samples: Sample[] = []
    try {
      SAMPLERS[entry.kind.name](
        entry.name,
        entry.component as never,
        (spec, value, labels) => samples.push({ spec, value, labels }),
        this.limits,
      )
      return samples
    } catch (error) {
      // One broken component must not fail the whole scrape: its series are left out, and that is said once.
      if (!entry.warned) {
        entry.warned = true
        process.emitWarning(
          `bulwark metrics: '${entry.name}' could not be read: ${error instanceof Error ? error.message : String(error)}`,
        )
      }
      return []
    }
  }
}
