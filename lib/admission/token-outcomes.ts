import type { TokenTable } from './token-table'
import type { Outcome } from './run-guarded'

/**
 * The Outcomes of calls holding tokens of one TokenTable, one per slot, made the first time a slot is used and
 * reused ever after: a slot holds one token at a time, and only the call's outcome releases it, so the token an
 * outcome reports is the one its slot holds then. This is what lets `execute` allocate no closure per call.
 */
export class TokenOutcomes {
  private readonly bySlot: Outcome[] = []
  declare private readonly tokens: TokenTable
  declare private readonly settle: (ok: boolean, token: number) => void

  constructor(tokens: TokenTable, settle: (ok: boolean, token: number) => void) {
    this.tokens = tokens
    this.settle = settle
  }

  /** The Outcome for an outstanding `token`. */
  of(token: number): Outcome {
    const slot = this.tokens.slotOf(token)
    return slot < this.bySlot.length ? this.bySlot[slot] : this.grow(slot)
  }

  // Slots are handed out lowest first, so the list stays dense (a holey array would slow every look-up).
  private grow(slot: number): Outcome {
    for (let s = this.bySlot.length; s <= slot; s++) this.bySlot.push(this.create(s))
    return this.bySlot[slot]
  }

  private create(slot: number): Outcome {
    return {
      passed: (value) => {
        this.settle(true, this.tokens.tokenAt(slot))
        return value
      },
      failed: (error) => {
        this.settle(false, this.tokens.tokenAt(slot))
        throw error
      },
    }
  }
}
