// The addon's known names (lib/foundation/native/addon-path.ts) pick what node-gyp-build would pick, and leave every other case
// to it: a folder laid out as a package is given build/ and prebuilds/ files, and each answer is compared.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { knownAddonPath } from '../../lib/foundation/native/addon-path'

const dirs: string[] = []
// The environment of the run (CI's PREBUILDS_ONLY=1, npm's variables) must not decide these cases.
beforeEach(() => {
  for (const name of [
    'PREBUILDS_ONLY',
    'BULWARK_PREBUILD',
    'npm_config_arch',
    'npm_config_platform',
    'ARM_VERSION',
    'LIBC',
  ])
    vi.stubEnv(name, undefined)
})
afterEach(() => {
  vi.unstubAllEnvs()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function packageWith(files: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'bulwark-addon-path-'))
  dirs.push(root)
  for (const file of files) {
    mkdirSync(join(root, file, '..'), { recursive: true })
    writeFileSync(join(root, file), '')
  }
  return root
}

const tuple = `${process.platform}-${process.arch}`
const libc = existsSync('/etc/alpine-release') ? 'musl' : 'glibc'
const prebuilt = process.platform === 'linux' ? `bulwark.napi.${libc}.node` : 'bulwark.napi.node'

describe('knownAddonPath', () => {
  it('takes build/Release/bulwark.node first, as node-gyp-build does', () => {
    const root = packageWith(['build/Release/bulwark.node', `prebuilds/${tuple}/${prebuilt}`])
    expect(knownAddonPath(root)).toBe(join(root, 'build', 'Release', 'bulwark.node'))
  })

  it("takes the platform's prebuilt binary when there is no build/", () => {
    const root = packageWith([`prebuilds/${tuple}/${prebuilt}`])
    expect(knownAddonPath(root)).toBe(join(root, 'prebuilds', tuple, prebuilt))
  })

  it('skips build/ under PREBUILDS_ONLY', () => {
    vi.stubEnv('PREBUILDS_ONLY', '1')
    const root = packageWith(['build/Release/bulwark.node', `prebuilds/${tuple}/${prebuilt}`])
    expect(knownAddonPath(root)).toBe(join(root, 'prebuilds', tuple, prebuilt))
  })

  it('leaves node-gyp-build to decide for a build/ without the release binary, a missing file or an override', () => {
    expect(knownAddonPath(packageWith(['build/Debug/bulwark.node', `prebuilds/${tuple}/${prebuilt}`]))).toBe(undefined)
    expect(knownAddonPath(packageWith([`prebuilds/${tuple}/other.node`]))).toBe(undefined)
    vi.stubEnv('BULWARK_PREBUILD', '/elsewhere')
    expect(knownAddonPath(packageWith(['build/Release/bulwark.node']))).toBe(undefined)
  })

  it.runIf(process.platform === 'linux')('takes the musl binary when LIBC says musl', () => {
    vi.stubEnv('LIBC', 'musl')
    const root = packageWith([
      `prebuilds/${tuple}/bulwark.napi.glibc.node`,
      `prebuilds/${tuple}/bulwark.napi.musl.node`,
    ])
    expect(knownAddonPath(root)).toBe(join(root, 'prebuilds', tuple, 'bulwark.napi.musl.node'))
  })
})
