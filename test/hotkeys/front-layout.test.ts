// The HeavyKeeper front's memory is laid out once, in native/core/hotkeys/heavy_keeper_front.h: the binding exports
// every offset and the TypeScript front reads them, checking at load the ones its hot path writes as literals.
import { describe, expect, it } from 'vitest'
import { frontBytes } from '../../lib/components/hotkeys/heavy-keeper-front'
import { FRONT_LITERALS_AGREE, FRONT_MAX_DEPTH } from '../../lib/components/hotkeys/heavy-keeper-front-layout'
import { native } from '../../lib/foundation/native/load-native'

describe("the HeavyKeeper front's layout", () => {
  const layout = native.layout.heavyKeeperFront

  it('comes from the binding, every field a number', () => {
    const fields = Object.entries(layout)
    expect(fields.length).toBe(20)
    for (const [, value] of fields) expect(Number.isInteger(value)).toBe(true)
    expect(layout.decayOffset + layout.decayTableSize * 8).toBe(layout.headerSize)
    expect(layout.entryBuckets + layout.entryRows).toBe(layout.entryPending)
  })

  it("agrees with the literals of the front's hot path, so that local HeavyKeepers use their front", () => {
    expect(FRONT_LITERALS_AGREE).toBe(true)
    expect(FRONT_MAX_DEPTH).toBe(layout.entryRows)
  })

  it("sizes the front from native code's header, rows, dirty list and aligned entries", () => {
    const words8 = (n: number) => Math.ceil((n * 4) / 8) * 8
    const k = 10
    const depth = 4
    const nativeSize = layout.headerSize + words8(depth) + words8(k) + layout.entryAlign - 8 + k * layout.entryWords * 4
    // The front keeps up to 16 entries per key outside the top-k after native code's.
    expect(frontBytes(k, depth)).toBe(nativeSize + 16 * k * layout.entryWords * 4)
  })
})
