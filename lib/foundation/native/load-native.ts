import { existsSync } from 'fs'
import { dirname, join, resolve } from 'path'

import { SAMPLER_DEFAULTS } from './sampler-defaults'
import { knownAddonPath } from './addon-path'
import { nativeLoadFailure } from './load-failure'
import type { NativeBinding } from './native-types'

// The package root (where build/ and prebuilds/ live): the nearest folder holding binding.gyp above this code,
// which runs from dist/cjs/chunks/ (the build), dist-internal/foundation/native/ (test threads) or
// lib/foundation/native/ (tests of the sources). Bundled into an application there is none: the bundle's own
// folder is named, and the load error says that the code runs outside bulwark's package.
function findPackageRoot(): string {
  let dir = __dirname
  while (!existsSync(join(dir, 'binding.gyp'))) {
    const parent = dirname(dir)
    if (parent === dir) return __dirname
    dir = parent
  }
  return dir
}
const packageRoot = findPackageRoot()

function loadBinding(): NativeBinding {
  // BULWARK_NATIVE points at a specific build (a sanitizer build from `npm run build:cmake`, say).
  const override = process.env.BULWARK_NATIVE
  const tried: string[] = []
  try {
    if (override) {
      tried.push(override)
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require(resolve(override)) as NativeBinding
    }
    tried.push(join(packageRoot, 'build', 'Release', 'bulwark.node'))
    tried.push(join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`, '*.node'))
    const known = knownAddonPath(packageRoot)
    if (known !== undefined) {
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        return require(known) as NativeBinding
      } catch {
        // node-gyp-build picks the same file and reports its failure, or finds one that loads.
      }
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const nodeGypBuild = require('node-gyp-build') as (dir: string) => NativeBinding
    return nodeGypBuild(packageRoot)
  } catch (cause) {
    throw nativeLoadFailure(tried, cause, packageRoot)
  }
}

// worker_threads costs the main thread 2-3.5 MB and 7-14 ms to load (Node 20-26), for a threadId that is 0 there.
// A worker thread has always loaded it (Node's worker bootstrap does), so it is required only where it is free.
function currentThreadId(): number {
  const loaded = (process as { moduleLoadList?: unknown }).moduleLoadList
  const inWorkerOrLoaded =
    !Array.isArray(loaded) ||
    loaded.includes('NativeModule worker_threads') ||
    loaded.includes('NativeModule internal/main/worker_thread')
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return inWorkerOrLoaded ? (require('worker_threads') as typeof import('worker_threads')).threadId : 0
}

/** The addon, loaded once per thread. */
export const native: NativeBinding = loadBinding()
native.setThreadId(currentThreadId())
native.samplerStart(SAMPLER_DEFAULTS)
