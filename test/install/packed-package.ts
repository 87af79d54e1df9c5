// The packed package and what an installed copy must do, shared by the install tests (npm in
// prebuilt-install.test.ts, pnpm and Yarn in package-managers.test.ts).
import { createRequire } from 'module'
import { join } from 'path'
import { expect } from 'vitest'

import { npm, packageRoot, runOk } from './child-process'

export const { prebuildProblem, localTarget, localTargets } = createRequire(__filename)(
  '../../scripts/prebuilds.js',
) as {
  prebuildProblem: () => string | null
  localTarget: string
  localTargets: { file: string }[]
}

export interface Packed {
  filename: string
  files: { path: string }[]
}

function pack(dir: string, destination: string): Packed {
  // --ignore-scripts: prepare would rebuild dist/ under the other test files running now.
  const [packed] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', destination], dir))
  return { ...packed, filename: join(destination, packed.filename) }
}

/**
 * Packs prebuilds/ when this machine's binary there is current; otherwise builds it first (scripts/prebuild/, which
 * writes only prebuilds/ and build-prebuild/, never the build/ the other test files load from), one test file at a
 * time (the lock the sanitizer build takes too).
 */
export function packWithPrebuild(work: string): Packed {
  if (prebuildProblem() !== null) {
    const build = join(packageRoot, 'scripts', 'prebuild', 'build.js')
    runOk('flock', ['/tmp/bulwark-build.lock', process.execPath, build], work)
  }
  return pack(packageRoot, work)
}

/**
 * What an installed copy is checked with, through require() or import() (as `b`): a real call into C++, a shared
 * region opened and closed, and the path of the addon the process actually mapped. Prints a CheckResult.
 */
export const installChecks = `
const layout = new b.RegionLayout('install-check', 2)
const at = layout.cell()
const name = 'install-check-' + process.pid
const region = b.SharedRegion.open(name, layout)
region.f64[(region.base + at) / 8] = 42
const listedWhileOpen = b.listRegions().includes(region.name)
region.close()
console.log(JSON.stringify({
  cpu: b.cpuUsage(),
  source: b.loadInfo().source,
  value: region.f64[(region.base + at) / 8],
  listedWhileOpen,
  listedAfterClose: b.listRegions().includes(region.name),
  addons: process.report.getReport().sharedObjects.filter((file) => file.endsWith('.node')),
}))
`

export interface CheckResult {
  cpu: number
  source: string
  value: number
  listedWhileOpen: boolean
  listedAfterClose: boolean
  addons: string[]
}

/** The checks passed, with this machine's prebuilt binary from `packageDir` (the installed bulwark). */
export function expectWorking(result: CheckResult, packageDir: string): void {
  expect(Number.isFinite(result.cpu)).toBe(true)
  expect(['host', 'cgroup-v1', 'cgroup-v2']).toContain(result.source)
  expect(result.value).toBe(42)
  expect(result.listedWhileOpen).toBe(true)
  expect(result.listedAfterClose).toBe(false)
  expect(result.addons).toHaveLength(1)
  // This machine's binary (bulwark.napi.glibc.node here, not the musl one beside it).
  expect(result.addons[0]).toBe(join(packageDir, 'prebuilds', localTarget, localTargets[0].file))
}
