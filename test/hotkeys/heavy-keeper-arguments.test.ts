// Regression: fadingOnce(2 ** 53) passed the TypeScript check and reached the native side, which threw an untyped
// TypeError (found by the reliability fuzzing).
import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { HeavyKeeper } from '../../lib/components/hotkeys/heavy-keeper'

describe('HeavyKeeper.fadingOnce epochs', () => {
  it('refuses integers past 2^53 - 1 with InvalidArgumentError and accepts the largest safe one', () => {
    const hk = new HeavyKeeper({ k: 2, seed: 1 })
    expect(() => hk.fadingOnce(2 ** 53)).toThrow(InvalidArgumentError)
    expect(() => hk.fadingOnce(Number.MAX_VALUE)).toThrow(/argument `epoch`/)
    expect(hk.fadingOnce(Number.MAX_SAFE_INTEGER)).toBe(true)
    hk.close()
  })
})
