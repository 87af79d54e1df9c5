// The release check (scripts/prebuild/check-binaries.js) against real binaries: the node-gyp build of this machine
// (g++ and the system's libstdc++, built for today's glibc) must fail it, and a Zig prebuild must pass it.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'fs'
import { createRequire } from 'module'
import { tmpdir } from 'os'
import { join } from 'path'
import { describe, expect, it } from 'vitest'

import { packageRoot } from './child-process'

interface Target {
  id: string
  glibc?: string
}
const load = createRequire(import.meta.url)
const { checkBinary } = load('../../scripts/prebuild/check-binaries.js') as {
  checkBinary: (target: Target, file: string) => string[]
}
const { findTarget, prebuildPath } = load('../../scripts/prebuild/targets.js') as {
  findTarget: (id: string) => Target
  prebuildPath: (target: Target) => string
}

const glibcX64 = findTarget('linux-x64-glibc')
const localBuild = join(packageRoot, 'build', 'Release', 'bulwark.node')

// A copy of a prebuild with every occurrence of one name replaced by another of the same length, as a binary linked
// against another library, or exporting another entry point, would read.
const scratch = mkdtempSync(join(tmpdir(), 'bulwark-check-'))
function renamed(file: string, from: string, to: string): string {
  const bytes = readFileSync(file)
  const [a, b] = [Buffer.from(from, 'latin1'), Buffer.from(to, 'latin1')]
  let count = 0
  for (let at = bytes.indexOf(a); at >= 0; at = bytes.indexOf(a, at + 1), count++) b.copy(bytes, at)
  expect(count, `${from} in ${file}`).toBeGreaterThan(0)
  const copy = join(scratch, `${count}-${to.replace(/\W/g, '_')}`)
  writeFileSync(copy, bytes)
  return copy
}
const prebuilt = (id: string) => ({ target: findTarget(id), file: join(packageRoot, prebuildPath(findTarget(id))) })

describe('check-binaries', () => {
  it.runIf(process.platform === 'linux' && process.arch === 'x64' && existsSync(localBuild))(
    'rejects the g++ build: newer glibc symbols than the baseline and the shared libstdc++',
    () => {
      const problems = checkBinary(glibcX64, localBuild).join('\n')
      expect(problems).toMatch(/needs GLIBC_2\.(1[89]|[2-9]\d), newer than the baseline 2\.17/)
      expect(problems).toMatch(/links a shared C\+\+ runtime: libstdc\+\+\.so\.6/)
    },
  )

  const arm64 = join(packageRoot, prebuildPath(findTarget('linux-arm64-glibc')))
  const macos = join(packageRoot, prebuildPath(findTarget('darwin-arm64')))
  it.runIf(existsSync(arm64) && existsSync(macos))('rejects a binary of another architecture or format', () => {
    expect(checkBinary(glibcX64, arm64).join('\n')).toMatch(/is not ELF for x86-64/)
    expect(checkBinary(glibcX64, macos).join('\n')).toMatch(/is not ELF for x86-64/)
  })

  it('reports a missing binary', () => {
    expect(checkBinary(glibcX64, join(packageRoot, 'no-such.node'))).toEqual([
      'linux-x64-glibc: no-such.node is missing',
    ])
  })

  it.runIf(existsSync(join(packageRoot, prebuildPath(glibcX64))))('accepts the Zig prebuild', () => {
    expect(checkBinary(glibcX64, join(packageRoot, prebuildPath(glibcX64)))).toEqual([])
  })

  const windows = prebuilt('win32-x64')
  it.runIf(existsSync(windows.file))('accepts the Windows prebuild, and refuses one that needs a foreign DLL', () => {
    expect(checkBinary(windows.target, windows.file)).toEqual([])
    const foreign = renamed(windows.file, 'msvcrt.dll', 'msvcrx.dll')
    expect(checkBinary(windows.target, foreign).join('\n')).toMatch(/not part of the system: msvcrx\.dll/)
    const noEntry = renamed(windows.file, 'napi_register_module_v1', 'napi_register_module_v9')
    expect(checkBinary(windows.target, noEntry).join('\n')).toMatch(/does not export napi_register_module_v1/)
  })

  const mac = prebuilt('darwin-arm64')
  it.runIf(existsSync(mac.file))('accepts the macOS prebuild, and refuses one that needs a non-system dylib', () => {
    expect(checkBinary(mac.target, mac.file)).toEqual([])
    const foreign = renamed(mac.file, '/usr/lib/libSystem.B.dylib', '/opt/lib/libSystem.B.dylib')
    expect(checkBinary(mac.target, foreign).join('\n')).toMatch(/not part of the system: \/opt\/lib\/libSystem/)
    const noEntry = renamed(mac.file, '_napi_register_module_v1', '_napi_register_module_v9')
    expect(checkBinary(mac.target, noEntry).join('\n')).toMatch(/does not export napi_register_module_v1/)
  })
})
