/**
 * A locked decision that saw its component's live rule move while it waited decides again under the new rule, once
 * (docs/rules/live-rules.md). A rule word that keeps changing must not hold the call (docs/guide/trust.md): a
 * change during the second decision denies. One per component; nothing is allocated.
 */
export class DecideAgain {
  private deciding = false

  /** `decide.call(self, n)` once more, or false when this call is already the second decision. */
  once<T>(decide: (this: T, n: number) => boolean, self: T, n: number): boolean {
    if (this.deciding) return false
    this.deciding = true
    try {
      return decide.call(self, n)
    } finally {
      this.deciding = false
    }
  }
}
