import type { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { INVALID, TokenTable } from '../../admission/token-table'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import {
  KeyConcurrencyLimiter,
  type KeyConcurrencyLimiterOptions,
} from '../../components/key-limits/key-concurrency-limiter'
import { checkOptions } from '../../foundation/common/validate'

/** The inbound guards' `keyConcurrency` option (docs/rules/key-concurrency.md). */
export interface KeyConcurrencyOptions<Req> {
  /** A limiter of your own (shared, say), or options to make one (closed by `guard.close()`). */
  limiter?: KeyConcurrencyLimiter | KeyConcurrencyLimiterOptions
  /** Short for `limiter: { max }`: a limiter local to this guard. */
  max?: number
  /** The request's key: a tenant, an API key, an account (not something a client mints freely). */
  key: (request: Req) => string
}

/** No adaptive limiter token rides with the pair (the guard has no adaptive limiter). */
export const NO_TOKEN = -1

/**
 * The guard's side of per-key concurrency: a request admitted by both the key's limit and the adaptive limiter
 * holds two tokens, and the adapters carry one number. The guard hands out a token of its own whose slot keeps
 * both; `unpair` gives back the key's slot once and returns the adaptive limiter's token (INVALID for a token
 * that is not outstanding, so that a second release of the same response does nothing twice).
 */
export class KeyConcurrencyPort<Req> {
  readonly limiter: KeyConcurrencyLimiter
  readonly key: (request: Req) => string
  private readonly owns: boolean
  /** Guard token -> adaptive limiter token (as the token table's stored number). */
  private readonly pairs = new TokenTable(64)
  /** The key limiter's token, by guard token slot. */
  private readonly keyTokens: number[] = []

  /** `field`: the option's name in errors (a route's is its own). */
  constructor(value: unknown, field = 'keyConcurrency') {
    const o = checkOptions<KeyConcurrencyOptions<Req>>(value, field)
    if (typeof o.key !== 'function') throw new InvalidOptionError(`${field}.key`, o.key, 'a function of the request')
    if ((o.limiter === undefined) === (o.max === undefined))
      throw new InvalidOptionError(field, value, 'either `limiter` or `max`')
    this.key = o.key
    this.owns = !(o.limiter instanceof KeyConcurrencyLimiter)
    const made = o.limiter ?? { max: o.max as number }
    this.limiter = made instanceof KeyConcurrencyLimiter ? made : new KeyConcurrencyLimiter(made)
  }

  /** One token for both: the key limiter's `keyToken` and the adaptive limiter's `token` (or NO_TOKEN); -1 if full. */
  pair(keyToken: number, token: number): number {
    const t = this.pairs.acquire(token)
    if (t < 0) return -1
    const slot = this.pairs.slotOf(t)
    if (slot < this.keyTokens.length) this.keyTokens[slot] = keyToken
    else this.keyTokens.push(keyToken) // slots are handed out lowest first: the list stays dense
    return t
  }

  /**
   * `pair`, or, when this guard's table is full (a million requests in flight), both tokens given back (the
   * adaptive limiter's unmeasured) and -1: the request is then refused like a key at its limit.
   */
  pairOrRelease(keyToken: number, token: number, adaptive: BbrLimiter | undefined): number {
    const paired = this.pair(keyToken, token)
    if (paired >= 0) return paired
    this.limiter.release(keyToken)
    if (token >= 0) adaptive?.release(token, false)
    return -1
  }

  /** Releases the key's slot of `t` and returns its adaptive limiter token, or INVALID if `t` is not outstanding. */
  unpair(t: number): number {
    const slot = this.pairs.slotOf(t)
    const token = this.pairs.release(t)
    if (token !== INVALID) this.limiter.release(this.keyTokens[slot])
    return token
  }

  close(): void {
    if (this.owns) this.limiter.close()
  }
}
