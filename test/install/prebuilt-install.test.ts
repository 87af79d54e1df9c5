// Installs the packed package into an empty project with only `node` on PATH (no compiler, make or python), so
// the install can only succeed by using the prebuilt binary, then loads it with require() and import().
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cleanEnv, nodeJson, npm, timeScale } from './child-process'
import {
  type CheckResult,
  type Packed,
  expectWorking,
  installChecks,
  localTarget,
  packWithPrebuild,
} from './packed-package'

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

  it('works through require()', () => {
    const project = join(work, 'consumer')
    expectWorking(nodeJson<CheckResult>(['-e', `const b = require('bulwark')\n${installChecks}`], project), installed)
  })

  it('works through import()', () => {
    const project = join(work, 'consumer')
    const script = `const b = await import('bulwark')\n${installChecks}`
    expectWorking(nodeJson<CheckResult>(['--input-type=module', '-e', script], project), installed)
  })

  // npm may skip install scripts (--ignore-scripts, allowScripts): node-gyp-build then finds the prebuilt binary
  // when bulwark is first loaded, so a platform with a prebuild never needs the script.
  it(
    'works when npm runs no install script',
    () => {
      const project = installInto(work, 'no-scripts', packed.filename, ['--ignore-scripts'])
      const result = nodeJson<CheckResult>(['-e', `const b = require('bulwark')\n${installChecks}`], project)
      expectWorking(result, join(project, 'node_modules', 'bulwark'))
    },
    180_000 * timeScale,
  )
})
