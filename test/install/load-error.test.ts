// What a user sees when no binary fits: a NativeLoadError that names the platform, the N-API version, every path
// tried and the command that builds from source.
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cleanEnv, nodeJson, packageRoot } from './child-process'

interface LoadFailure {
  isNativeLoadError: boolean
  name: string
  code: string
  message: string
  tried: string[]
}

// Loads the package at `dir` and reports the error as JSON. The root entry loads the addon as it loads, as
// `require('bulwark')` does; the error is recognised by bulwark's own guard (which works across copies).
function loadFailure(dir: string, env = cleanEnv(), nodeArgs: string[] = []): LoadFailure {
  const guards = join(packageRoot, 'dist-internal', 'foundation', 'errors', 'error-guards')
  const script = `
const { isNativeLoadError } = require(${JSON.stringify(guards)})
try {
  require(${JSON.stringify(join(dir, 'dist', 'cjs'))})
  console.log(JSON.stringify({ loaded: true }))
} catch (error) {
  const { name, code, message, tried } = error
  console.log(JSON.stringify({ isNativeLoadError: isNativeLoadError(error), name, code, message, tried }))
}`
  return nodeJson<LoadFailure>([...nodeArgs, '-e', script], dir, env)
}

const platform = `${process.platform}-${process.arch}`
const napi = `N-API ${process.versions.napi}`
const buildCommand = 'npm rebuild bulwark --build-from-source'

describe('loading without a usable binary', () => {
  let copy: string

  beforeAll(() => {
    // The built package without build/ or prebuilds/; node_modules is the real one, so node-gyp-build is found.
    copy = mkdtempSync(join(tmpdir(), 'bulwark-nobinary-'))
    cpSync(join(packageRoot, 'dist'), join(copy, 'dist'), { recursive: true })
    for (const file of ['package.json', 'binding.gyp']) cpSync(join(packageRoot, file), join(copy, file))
    symlinkSync(join(packageRoot, 'node_modules'), join(copy, 'node_modules'))
  })

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true })
  })

  it('throws a NativeLoadError naming platform, N-API version, the paths tried and the fix', () => {
    const failure = loadFailure(copy)
    expect(failure.isNativeLoadError).toBe(true)
    expect(failure.name).toBe('NativeLoadError')
    expect(failure.code).toBe('ERR_BULWARK_NATIVE_LOAD')
    expect(failure.message).toContain(platform)
    expect(failure.message).toContain(napi)
    expect(failure.message).toContain(join(copy, 'build', 'Release', 'bulwark.node'))
    expect(failure.message).toContain(join(copy, 'prebuilds', platform))
    expect(failure.message).toContain(buildCommand)
    expect(failure.message).not.toContain('outside its package') // the bundler hint: this is the package itself
    expect(failure.tried).toEqual([
      join(copy, 'build', 'Release', 'bulwark.node'),
      join(copy, 'prebuilds', platform, '*.node'),
    ])
  })

  it('under --no-addons: says Node refuses addons and how to allow them, not how to build one', () => {
    const failure = loadFailure(packageRoot, cleanEnv(), ['--no-addons'])
    expect(failure.isNativeLoadError).toBe(true)
    expect(failure.message).toContain('--no-addons')
    expect(failure.message).toContain('--allow-addons')
    expect(failure.message).not.toContain(buildCommand)
  })

  it('names the BULWARK_NATIVE file when that override points at nothing', () => {
    const missing = join(copy, 'no-such-build', 'bulwark.node')
    const failure = loadFailure(packageRoot, cleanEnv({ BULWARK_NATIVE: missing }))
    expect(failure.isNativeLoadError).toBe(true)
    expect(failure.message).toContain(platform)
    expect(failure.message).toContain(napi)
    expect(failure.message).toContain(missing)
    expect(failure.message).toContain(buildCommand)
    expect(failure.tried).toEqual([missing])
  })
})
