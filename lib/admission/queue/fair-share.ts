import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'

/** BbrLimiter's `fairness` option (docs/rules/fairness.md). */
export interface FairnessOptions {
  /** Keys tracked: the heaviest `k` recent admitters (default 64). Memory is fixed by it, whatever the keys. */
  k?: number
  /** How often the heavy keys are worked out again, ms (default 100). */
  step?: number
  /** Half-life of the admission counts, ms (default 1000): "recently admitted" means about this long. */
  halfLife?: number
}

export interface ResolvedFairness {
  k: number
  step: number
  halfLife: number
}

/** `shared`: the limiter's name, which the HeavyKeeper's (`<shared>-fairness`) extends. */
export function resolveFairness(value: unknown, shared: string | undefined): ResolvedFairness | undefined {
  if (value === undefined || value === false) return undefined
  if (shared !== undefined && shared.length > 120 - FAIRNESS_SUFFIX.length)
    throw new InvalidOptionError('shared', shared, 'a name of at most 111 characters with fairness on')
  const o = checkOptions<FairnessOptions>(value === true ? {} : value, 'fairness')
  return {
    k: optionalNumber('fairness.k', o.k, 64, { integer: true, min: 2, max: 4096 }),
    step: optionalNumber('fairness.step', o.step, 100, { above: 0, max: 60_000 }),
    halfLife: optionalNumber('fairness.halfLife', o.halfLife, 1000, { above: 0, max: 3_600_000 }),
  }
}

const FAIRNESS_SUFFIX = '-fairness'

/** The name of the HeavyKeeper that counts a shared limiter's admitted keys (undefined: a local one). */
export function fairnessKeeperName(shared: string | undefined): string | undefined {
  return shared === undefined ? undefined : shared + FAIRNESS_SUFFIX
}

/**
 * What FairShare needs of a top-k counter (a HeavyKeeper, which the limiter makes: a component, above this layer).
 * Counts fade by half once per `fadingOnce` epoch.
 */
export interface AdmittedKeys {
  add(key: string): unknown
  fadingOnce(epoch: number): unknown
  list(): readonly { readonly key: string; readonly count: number }[]
  close(): void
}

/**
 * Light keys may fill the limit up to this share over it while heavy keys exist: room for them to pass while the
 * heavy keys' requests are shed, bounded so that keys minted freely cannot take the host past it.
 */
export const FAIR_HEADROOM = 1.5

/**
 * Light keys pass the queueing-delay check while its admit fraction is at least this: below it the heavy keys' requests
 * are nearly all shed already, so a delay that stays comes from the light keys, and the check sheds them too.
 */
export const FAIR_MIN_FRACTION = 0.05

/**
 * A key is heavy when its count is over this multiple of the fair one (the mean over the top-k): the margin keeps
 * keys of equal weight, whose counts jitter around the mean, from being split into heavy and light at random.
 */
const HEAVY_OVER_FAIR = 1.25

/**
 * Who was recently admitted, and whether a key takes more than its fair share (docs/rules/fairness.md): a
 * HeavyKeeper (host-wide when the limiter is shared) counts each admitted request's key, halved every half-life;
 * every `step` the top-k is read and a key is heavy when its count is over 1.25 times the mean count there. While at
 * least one key is heavy, the other keys are light and a limiter lets them pass the checks that would shed them
 * (within FAIR_HEADROOM), so that the heavy keys' requests are shed first.
 */
export class FairShare {
  private readonly keeper: AdmittedKeys
  private readonly step: number
  private readonly halfLife: number
  private nextStepAt = -Infinity
  private heavy = new Set<string>()
  /** Requests of light keys decided while some key was heavy (the checks let them through within the headroom). */
  favoured = 0

  /** `keeper` counts the top `options.k` keys; FairShare closes it. */
  constructor(options: ResolvedFairness, keeper: AdmittedKeys) {
    this.step = options.step
    this.halfLife = options.halfLife
    this.keeper = keeper
  }

  /** Counts an admitted request of `key`. */
  admitted(key: string): void {
    this.keeper.add(key)
  }

  /** Whether `key` may pass a check that would shed it: some key is heavy and this one is not. */
  favours(key: string, now: number): boolean {
    if (now >= this.nextStepAt) this.refresh(now)
    if (this.heavy.size === 0 || this.heavy.has(key)) return false
    this.favoured++
    return true
  }

  /** Keys over their fair share at the last step. */
  heavyKeys(): string[] {
    return [...this.heavy]
  }

  close(): void {
    this.keeper.close()
  }

  private refresh(now: number): void {
    this.nextStepAt = now + this.step
    const epoch = Math.floor(now / this.halfLife)
    if (epoch >= 0) this.keeper.fadingOnce(epoch)
    const top = this.keeper.list()
    let total = 0
    for (const item of top) total += item.count
    // Keys outside the top-k are lighter than every key in it: the fair share is the mean over the keys it holds.
    const heavyOver = (HEAVY_OVER_FAIR * total) / Math.max(1, top.length)
    const heavy = new Set<string>()
    for (const item of top) if (item.count > heavyOver) heavy.add(item.key)
    this.heavy = heavy
  }
}
