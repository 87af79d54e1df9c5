import { INVALID, TokenTable } from '../../admission/token-table'

const RULES = 2 ** 30 // inner tokens stay below it (TokenTable's), so that rule * RULES + token is exact

/**
 * The guard's tokens when routes hold concurrency limits of their own (docs/guide/gateway.md, "Routes"): the
 * adapters carry one number per request, and its release must reach the rule that admitted it. Each token here
 * keeps its rule's index and the rule's own token; a token released twice, or made up, is INVALID.
 */
export class RouteTokens {
  declare private readonly table: TokenTable
  /** The rule index of the token released last. */
  rule = 0

  constructor() {
    this.table = new TokenTable(1024)
  }

  /** A token for `inner` (>= 0) of rule `rule`; -1 when a million are out already. */
  wrap(rule: number, inner: number): number {
    return this.table.acquire(rule * RULES + inner)
  }

  /** The inner token of `token` (its rule in `rule`), or INVALID when it is not outstanding. */
  unwrap(token: number): number {
    const stored = this.table.release(token)
    if (stored < 0) return INVALID // INVALID, or NOT_SAMPLED, which wrap() never stores
    const rule = Math.floor(stored / RULES)
    this.rule = rule
    return stored - rule * RULES
  }
}
