// What the inbound guard checks before anything else (docs/guide/gateway.md, "Allow and deny lists, bans"): the
// access list's entries for the client's address and the request's key, then the request's ban.
import { Shed } from '../../foundation/errors/shed'
import { AccessList, ALLOWED, DENIED, NO_ENTRY } from '../../components/access/access-list'
import { BanList } from '../../components/access/ban-list'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions, optionalFunction } from '../../foundation/common/validate'
import { addressKey, retrySeconds } from './inbound-helpers'
import type { AccessOptions, BanOptions } from './gateway-options'
import type { RequestAccess } from './inbound-guard-types'

/** What the guard answers for a request an allow entry (or a skipped route) lets past every limit: a token >= 0. */
export const BYPASS = 2 ** 30 - 1
/** The screen's verdict for a request that goes on to the limits. */
export const PASS = 0

/** Refusals that count toward a ban: those about the client's own share (429), never the server's load (503). */
export function countsTowardBan(code: number): boolean {
  return code === Shed.rateLimit || code === Shed.keyConcurrency || code === Shed.connectionConcurrency
}

/**
 * The access list and bans as the guard applies them: `check` answers PASS, BYPASS (an allow entry) or a Shed code
 * (Shed.denied, Shed.banned with `retryAfter` set), counted; `strike` counts the checked request's refusal toward
 * its ban. Neither throws; a check allocates nothing unless the request's key function does.
 */
export class AccessScreen<Req> {
  denied = 0
  banned = 0
  /** Seconds the last ban refusal asks the client to wait: the ban's rest. */
  retryAfter = 0
  declare readonly list: AccessList | undefined
  declare readonly bans: BanList | undefined
  declare private readonly ownsBans: boolean
  declare private readonly listKey: ((request: Req) => string) | undefined
  declare private readonly addressOf: ((request: Req) => string | undefined) | undefined
  declare private readonly banKey: ((request: Req) => string) | undefined
  declare private readonly access: RequestAccess<Req>
  private lastAddress: unknown = undefined
  private lastAddressKey = 'unknown'
  /** The ban key of the request checked last (strike() counts against it). */
  private struck: string | undefined = undefined

  /** The screen for these options, or undefined when neither is given. */
  static of<Req>(
    access: unknown,
    bans: unknown,
    rateKey: ((request: Req) => string) | undefined,
    requestAccess: RequestAccess<Req>,
  ): AccessScreen<Req> | undefined {
    if (access === undefined && bans === undefined) return undefined
    return new AccessScreen<Req>(access, bans, rateKey, requestAccess)
  }

  private constructor(
    accessOption: unknown,
    bansOption: unknown,
    rateKey: ((request: Req) => string) | undefined,
    requestAccess: RequestAccess<Req>,
  ) {
    this.access = requestAccess
    if (accessOption instanceof AccessList) {
      this.list = accessOption
      this.listKey = undefined
      this.addressOf = undefined
    } else if (accessOption !== undefined) {
      const a = checkOptions<AccessOptions<Req>>(accessOption, 'access')
      if (!(a.list instanceof AccessList)) throw new InvalidOptionError('access.list', a.list, 'an AccessList')
      this.list = a.list
      this.listKey = optionalFunction<(request: Req) => string>('access.key', a.key)
      this.addressOf = optionalFunction<(request: Req) => string | undefined>('access.address', a.address)
    } else {
      this.list = undefined
      this.listKey = undefined
      this.addressOf = undefined
    }
    if (bansOption === undefined) {
      this.bans = undefined
      this.ownsBans = false
      this.banKey = undefined
      return
    }
    const b = checkOptions<BanOptions<Req>>(bansOption, 'bans')
    const { list, key, ...options } = b
    this.banKey = optionalFunction<(request: Req) => string>('bans.key', key) ?? rateKey
    if (list !== undefined) {
      if (!(list instanceof BanList)) throw new InvalidOptionError('bans.list', list, 'a BanList')
      const extra = Object.keys(options)[0]
      if (extra !== undefined) throw new InvalidOptionError(`bans.${extra}`, b[extra as never], 'left out beside list')
    }
    this.ownsBans = list === undefined
    this.bans = list ?? new BanList(options)
  }

  /** PASS, BYPASS, Shed.denied or Shed.banned for `request`. */
  check(request: Req): number {
    const list = this.list
    if (list !== undefined) {
      const addressOf = this.addressOf
      let mode = list.matchAddress(addressOf === undefined ? this.access.address(request) : addressOf(request))
      const keyOf = this.listKey
      if (keyOf !== undefined && mode !== DENIED) {
        const byKey = list.matchKey(keyOf(request))
        if (byKey === DENIED || mode === NO_ENTRY) mode = byKey
      }
      if (mode === DENIED) {
        this.denied++
        return Shed.denied
      }
      if (mode === ALLOWED) return BYPASS
    }
    const bans = this.bans
    if (bans === undefined) return PASS
    const key = this.banKey !== undefined ? String(this.banKey(request)) : this.addressKey(this.access.address(request))
    this.struck = key
    const ms = bans.bannedMs(key)
    if (ms <= 0) return PASS
    this.banned++
    this.retryAfter = retrySeconds(ms)
    return Shed.banned
  }

  /** The request checked last was refused for its own share: one strike toward its ban. */
  strike(): void {
    const key = this.struck
    if (key !== undefined && this.bans !== undefined) this.bans.strike(key)
  }

  close(): void {
    if (this.ownsBans) this.bans?.close()
  }

  private addressKey(address: unknown): string {
    if (address !== this.lastAddress) {
      this.lastAddress = address
      this.lastAddressKey = addressKey(address)
    }
    return this.lastAddressKey
  }
}
