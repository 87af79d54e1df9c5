// The packed package installed by the other package managers a team uses, with only `node` on PATH: pnpm (its
// isolated node_modules, where dependencies are symlinks into .pnpm/, and no install script unless approved) and
// Yarn (Plug'n'Play: no node_modules at all, packages read from zip archives, a native package unplugged to disk).
// Each install runs no build: the addon must be found at its first load.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cleanEnv, nodeJson, packageRoot, runOk } from './child-process'
import { type CheckResult, expectWorking, installChecks, packWithPrebuild } from './packed-package'

const pnpm = join(packageRoot, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs')
const yarn = join(packageRoot, 'node_modules', '@yarnpkg', 'cli-dist', 'bin', 'yarn.js')

describe('installed by pnpm and by Yarn, on a machine without a compiler', () => {
  let work: string
  let tarball: string
  let env: NodeJS.ProcessEnv

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'bulwark-managers-'))
    tarball = packWithPrebuild(work).filename
    const bin = join(work, 'bin')
    mkdirSync(bin)
    symlinkSync(process.execPath, join(bin, 'node'))
    env = cleanEnv({
      PATH: bin,
      // Each project keeps its own cache and settings: nothing from this machine's home directory.
      HOME: work,
      npm_config_store_dir: join(work, 'pnpm-store'),
      YARN_ENABLE_GLOBAL_CACHE: 'false',
      YARN_ENABLE_TELEMETRY: '0',
      YARN_NPM_REGISTRY_SERVER: 'https://registry.npmjs.org',
    })
  }, 180_000)

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true })
  })

  function project(name: string): string {
    const dir = join(work, name)
    mkdirSync(dir)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }))
    return dir
  }

  it('pnpm add: works through require() and import(), from the .pnpm store', () => {
    const dir = project('with-pnpm')
    runOk(process.execPath, [pnpm, 'add', tarball], dir, env)
    const installed = realpathSync(join(dir, 'node_modules', 'bulwark'))
    expect(installed).toContain(join('node_modules', '.pnpm'))
    expectWorking(nodeJson<CheckResult>(['-e', `const b = require('bulwark')\n${installChecks}`], dir, env), installed)
    const esm = `const b = await import('bulwark')\n${installChecks}`
    expectWorking(nodeJson<CheckResult>(['--input-type=module', '-e', esm], dir, env), installed)
  }, 180_000)

  it("yarn add under Plug'n'Play: works through require() with the project's .pnp.cjs, from the unplugged copy", () => {
    const dir = project('with-yarn')
    writeFileSync(join(dir, 'yarn.lock'), '')
    runOk(process.execPath, [yarn, 'add', `bulwark@file:${tarball}`], dir, env)
    expect(existsSync(join(dir, 'node_modules'))).toBe(false) // Plug'n'Play indeed
    const script = `const b = require('bulwark')\n${installChecks}`
    const result = nodeJson<CheckResult>(['--require', './.pnp.cjs', '-e', script], dir, env)
    // Yarn unpacks a package with a native addon to .yarn/unplugged/<name>-<hash>/node_modules/bulwark.
    const unplugged = result.addons[0]?.split(join('node_modules', 'bulwark'))[0] ?? ''
    expect(unplugged).toContain(join(dir, '.yarn', 'unplugged'))
    expectWorking(result, join(unplugged, 'node_modules', 'bulwark'))
  }, 180_000)
})
