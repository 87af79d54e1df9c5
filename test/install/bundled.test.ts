// A gateway bundled with esbuild (docs/guide/install.md, "Bundlers"): with bulwark kept external it runs; bundled
// in, the addon stays behind and the NativeLoadError says so and names both ways out; BULWARK_NATIVE pointing at the
// addon then makes the bundle run.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { cleanEnv, packageRoot, run, runOk } from './child-process'

const esbuild = join(packageRoot, 'node_modules', 'esbuild', 'bin', 'esbuild')
const addon = join(packageRoot, 'build', 'Release', 'bulwark.node')

// Every entry kind a gateway uses: the root, a subpath, a component that needs the addon.
const gateway = `
const { BbrLimiter, TokenBucket } = require('bulwark')
const { httpGuard } = require('bulwark/http')
const limiter = new BbrLimiter()
const token = limiter.tryAcquire()
limiter.release(token)
console.log(JSON.stringify({ admitted: token >= 0, bucket: new TokenBucket({ rate: 10 }).tryAcquire(), guard: typeof httpGuard }))
`

describe('a gateway bundled with esbuild', () => {
  let app: string
  /** Where the inside bundle is deployed: the bundle alone, no node_modules. */
  let deployed: string

  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'bulwark-bundled-'))
    mkdirSync(join(app, 'node_modules'))
    symlinkSync(packageRoot, join(app, 'node_modules', 'bulwark'))
    writeFileSync(join(app, 'gateway.js'), gateway)
    for (const [out, extra] of [
      ['external.js', ['--external:bulwark']],
      ['inside.js', []],
    ] as const) {
      runOk(esbuild, ['gateway.js', '--bundle', '--platform=node', `--outfile=dist/${out}`, ...extra], app)
    }
    deployed = mkdtempSync(join(tmpdir(), 'bulwark-deployed-'))
    copyFileSync(join(app, 'dist', 'inside.js'), join(deployed, 'gateway.js'))
  }, 60_000)

  afterAll(() => {
    for (const dir of [app, deployed]) if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const expected = JSON.stringify({ admitted: true, bucket: true, guard: 'function' })

  it('runs with bulwark kept external (node_modules/bulwark beside it)', () => {
    expect(runOk(process.execPath, ['dist/external.js'], app).trim()).toBe(expected)
  })

  it('bundled in: a NativeLoadError that says a bundler left the addon behind, and names both ways out', () => {
    const r = run(process.execPath, ['gateway.js'], deployed, cleanEnv())
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain('NativeLoadError')
    expect(r.stderr).toContain("bulwark's code runs outside its package")
    expect(r.stderr).toContain('--external:bulwark')
    expect(r.stderr).toContain('BULWARK_NATIVE')
  })

  it('bundled in, with BULWARK_NATIVE naming the addon: runs', () => {
    const r = run(process.execPath, ['gateway.js'], deployed, cleanEnv({ BULWARK_NATIVE: addon }))
    expect({ status: r.status, stdout: r.stdout.trim() }).toEqual({ status: 0, stdout: expected })
  })
})
