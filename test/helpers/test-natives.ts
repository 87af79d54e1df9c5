// The natives only tests use (native/binding/test/), present in development builds: `npm test` makes one when the
// addon in build/ lacks them (scripts/ensure-test-natives.js).
import { native } from '../../lib/native/load-native'
import type { NativeBinding } from '../../lib/native/native-types'

function required<K extends keyof NativeBinding>(name: K): NonNullable<NativeBinding[K]> {
  const value = native[name]
  if (value === undefined) {
    throw new Error(`the addon has no test-only native '${name}': build a development addon (npm run build:native)`)
  }
  return value as NonNullable<NativeBinding[K]>
}

export const windowAdd = required('windowAdd')
export const CpuReader = required('CpuReader')
