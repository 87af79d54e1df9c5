// The natives only tests use (native/binding/test/), present in development builds: `npm test` makes one when the
// addon in build/ lacks them (scripts/ensure-test-natives.js). Their types live here, not in lib/: the release
// build has no such exports, so the declarations the package ships do not name them.
import { native } from '../../lib/foundation/native/load-native'
import type { NativeLoadInfo, NativeMemoryInfo } from '../../lib/foundation/native/native-types'

export interface NativeCpuReader {
  info(): NativeLoadInfo
  /** Raw permille since the previous call at wall time `wallNs`; null on the priming call or a failed read. */
  sample(wallNs: number): number | null
}

export interface NativeMemoryReader {
  info(): NativeMemoryInfo
  /** The figures now; null when no source gives used and limit figures. */
  sample(): { used: number; limit: number; resident: number; limited: boolean } | null
}

interface TestNatives {
  /** C++ adds to a rolling window in a JavaScript view. */
  windowAdd(
    view: Uint8Array,
    startMs: number,
    bucketMs: number,
    size: number,
    lane: number,
    nowMs: number,
    value: number,
    times: number,
  ): void
  /** A cgroup CPU reader of its own below `root` ("/" in production); affinityCpus replaces the affinity mask. */
  CpuReader: new (root: string, affinityCpus?: number) => NativeCpuReader
  /** A cgroup memory reader of its own below `root` ("/" in production). */
  MemoryReader: new (root: string) => NativeMemoryReader
}

function required<K extends keyof TestNatives>(name: K): TestNatives[K] {
  const value = (native as unknown as Partial<TestNatives>)[name]
  if (value === undefined) {
    throw new Error(`the addon has no test-only native '${name}': build a development addon (npm run build:native)`)
  }
  return value as TestNatives[K]
}

export const windowAdd = required('windowAdd')
export const CpuReader = required('CpuReader')
export const MemoryReader = required('MemoryReader')
