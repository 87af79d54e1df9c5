// The release check (scripts/prebuild/check-binaries.js) against real binaries: the node-gyp build of this machine
// (g++ and the system's libstdc++, built for today's glibc) must fail it, and a Zig prebuild must pass it.
import { existsSync } from 'fs'
import { createRequire } from 'module'
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
})
