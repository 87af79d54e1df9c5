// Installs the packed package into an empty project with only `node` on PATH (no compiler, make or python), so
// the install can only succeed by using the prebuilt binary, then loads it with require() and import().
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'fs'
import { createRequire } from 'module'
import { tmpdir } from 'os'
import { join } from 'path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cleanEnv, nodeJson, npm, packageRoot, runOk, timeScale } from './child-process'

const { prebuildProblem, localTarget, localTargets } = createRequire(import.meta.url)('../../scripts/prebuilds.js') as {
  prebuildProblem: () => string | null
  localTarget: string
  localTargets: { file: string }[]
}

interface Packed {
  filename: string
  files: { path: string }[]
}

function pack(dir: string, destination: string): Packed {
  // --ignore-scripts: prepare would rebuild dist/ under the other test files running now.
  const [packed] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', destination], dir))
  return { ...packed, filename: join(destination, packed.filename) }
}

// Packs prebuilds/ when this machine's binary there is current; otherwise builds it first (scripts/prebuild/, which
// writes only prebuilds/ and build-prebuild/, never the build/ the other test files load from).
function packWithPrebuild(work: string): Packed {
  if (prebuildProblem() !== null) runOk(process.execPath, [join(packageRoot, 'scripts', 'prebuild', 'build.js')], work)
  return pack(packageRoot, work)
}

// Installs the tarball into a new empty project with only node on PATH, and returns the project and how long
// `npm install` took.
function installInto(work: string, name: string, tarball: string, extra: string[] = []): string {
  const bin = join(work, 'bin')
  if (!existsSync(bin)) {
    mkdirSync(bin)
    symlinkSync(process.execPath, join(bin, 'node'))
  }
  const project = join(work, name)
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }))
  // npm runs scripts with `sh` from PATH: name /bin/sh instead of putting a shell next to node.
  const args = ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--script-shell=/bin/sh', ...extra]
  const started = performance.now()
  npm(args, project, cleanEnv({ PATH: bin }))
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  console.log(`npm install ${extra.join(' ')} on ${localTarget} with no compiler on PATH: ${seconds} s`)
  return project
}

// The same checks through require() and import(): a real call into C++, a shared region opened and closed, and
// the path of the addon the process actually mapped.
const checks = `
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

interface CheckResult {
  cpu: number
  source: string
  value: number
  listedWhileOpen: boolean
  listedAfterClose: boolean
  addons: string[]
}

describe('npm install of the packed tarball on a machine without a compiler', () => {
  let work: string
  let packed: Packed
  let installed: string

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'bulwark-install-'))
    packed = packWithPrebuild(work)
    installed = join(installInto(work, 'consumer', packed.filename), 'node_modules', 'bulwark')
  }, 180_000 * timeScale)

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('packs the prebuilt binary, dist/ and the native sources, and no tests or benchmarks', () => {
    const paths = packed.files.map((file) => file.path)
    expect(paths.some((p) => p.startsWith(`prebuilds/${localTarget}/`) && p.endsWith('.node'))).toBe(true)
    expect(paths).toContain('dist/cjs/index.js')
    expect(paths).toContain('dist/esm/index.mjs')
    expect(paths).toContain('binding.gyp')
    expect(paths).toContain('scripts/native-sources.js')
    expect(paths.some((p) => p.startsWith('native/') && p.endsWith('.cc'))).toBe(true)
    expect(
      paths.filter(
        (p) => /^(test|bench|lib|build|build-cmake[^/]*|build-prebuild|\.toolchains)\//.test(p) || /\/test\//.test(p),
      ),
    ).toEqual([])
  })

  it('installs without building: no build/ dir, only the prebuilt binary', () => {
    expect(existsSync(join(installed, 'build'))).toBe(false)
    expect(readdirSync(join(installed, 'prebuilds', localTarget)).filter((f) => f.endsWith('.node'))).not.toEqual([])
  })

  function expectWorking(result: CheckResult, packageDir = installed): void {
    expect(Number.isFinite(result.cpu)).toBe(true)
    expect(['host', 'cgroup-v1', 'cgroup-v2']).toContain(result.source)
    expect(result.value).toBe(42)
    expect(result.listedWhileOpen).toBe(true)
    expect(result.listedAfterClose).toBe(false)
    expect(result.addons).toHaveLength(1)
    // This machine's binary (bulwark.napi.glibc.node here, not the musl one beside it).
    expect(result.addons[0]).toBe(join(packageDir, 'prebuilds', localTarget, localTargets[0].file))
  }

  it('works through require()', () => {
    const project = join(work, 'consumer')
    expectWorking(nodeJson<CheckResult>(['-e', `const b = require('bulwark')\n${checks}`], project))
  })

  it('works through import()', () => {
    const project = join(work, 'consumer')
    const script = `const b = await import('bulwark')\n${checks}`
    expectWorking(nodeJson<CheckResult>(['--input-type=module', '-e', script], project))
  })

  // npm may skip install scripts (--ignore-scripts, allowScripts): node-gyp-build then finds the prebuilt binary
  // when bulwark is first loaded, so a platform with a prebuild never needs the script.
  it(
    'works when npm runs no install script',
    () => {
      const project = installInto(work, 'no-scripts', packed.filename, ['--ignore-scripts'])
      const result = nodeJson<CheckResult>(['-e', `const b = require('bulwark')\n${checks}`], project)
      expectWorking(result, join(project, 'node_modules', 'bulwark'))
    },
    180_000 * timeScale,
  )
})
