import { describe, expect, it } from 'vitest'

import { native } from '../lib/foundation/native/load-native'
import { windowAdd } from './helpers/test-natives'

// The binding is reached only through lib/, which validates first; these calls go around it on purpose: the native
// side must still answer with an error, never a conversion with undefined behaviour or a crash.
describe('native binding: out-of-range numbers', () => {
  it('treats any out-of-range region handle as unknown', () => {
    for (const handle of [1e300, Number.NaN, -1, 0, 2 ** 60]) {
      expect(() => native.regionMembers(handle)).toThrow(
        expect.objectContaining({ code: 'ERR_BULWARK_INVALID_ARGUMENT' }),
      )
      expect(() => native.regionClose(handle)).not.toThrow()
    }
  })

  it('refuses a window lane or repeat count it could not represent', () => {
    const view = new Uint8Array(4096)
    for (const [lane, times] of [
      [1e300, 1],
      [Number.NaN, 1],
      [0, 1e300],
      [5000, 1],
    ]) {
      expect(() => windowAdd(view, 0, 100, 3, lane, 0, 1, times)).toThrow(
        expect.objectContaining({ code: 'ERR_BULWARK_INVALID_ARGUMENT' }),
      )
    }
  })
})
