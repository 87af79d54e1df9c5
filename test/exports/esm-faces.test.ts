// The ES module faces (dist/esm/*.mjs, scripts/build-ts.js): an import binds every name of an entry, and each is a
// stand-in (lib/esm/stand-in.mjs) that loads its value on first use and is then rebound to it. Each case runs in a
// fresh process, so that nothing an earlier case loaded hides what an import loads.
import * as fs from 'fs'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

import { nodeJson, packageRoot } from '../install/child-process'

/** Runs an ES module script in the package's directory (so 'bulwark/...' resolves to this build). */
function inEsm<T>(script: string): T {
  const prelude = `import { createRequire } from 'module'\nconst require = createRequire(import.meta.url)\n`
  return nodeJson<T>(['--input-type=module', '-e', prelude + script], packageRoot)
}

const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { import: string }>
}
const specifiers = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object')
  .map(([subpath]) => path.posix.join('bulwark', subpath))

describe('the ES module faces', () => {
  it('load no CommonJS file and not the addon at import', () => {
    const loaded = inEsm<string[]>(`
await import('bulwark/core')
await import('bulwark')
console.log(JSON.stringify(Object.keys(require.cache)))`)
    expect(loaded).toEqual([])
  })

  it("load a component's code at its first use, and only what it needs", () => {
    const loaded = inEsm<{ made: string[]; guard: string[] }>(`
import { SreBreaker, isOverloadError } from 'bulwark/core'
const files = () => Object.keys(require.cache).map((f) => f.split(/[\\\\/]/).slice(-2).join('/'))
isOverloadError(new Error('not ours'))
const guard = files()
new SreBreaker().tryAcquire()
console.log(JSON.stringify({ guard, made: files() }))`)
    expect(loaded.guard).toContain('packed/core-entry.js')
    expect(loaded.guard).not.toContain('packed/breakers.js')
    expect(loaded.made).toContain('packed/breakers.js')
    for (const files of [loaded.guard, loaded.made]) expect(files).not.toContain('packed/bbr.js')
  })

  it('behave as the classes they stand for: new, instanceof both ways, extends, statics, typed errors', () => {
    const seen = inEsm<Record<string, unknown>>(`
import * as core from 'bulwark/core'
const cjs = require('bulwark/core')
const BbrStandIn = core.BbrLimiter
const BreakerStandIn = core.CircuitBreaker
const OptionErrorStandIn = core.InvalidOptionError
// A subclass defined before anything was loaded.
class Tracked extends BreakerStandIn { label() { return 'tracked ' + this.state } }
const tracked = new Tracked({ strategy: 'errorRatio', failureRatio: 0.5 })
const limiter = new BbrStandIn()
let error
try { new core.TokenBucket({ rate: -1 }) } catch (e) { error = e }
console.log(JSON.stringify({
  standInIsNotReal: BbrStandIn !== cjs.BbrLimiter,
  reboundToReal: core.BbrLimiter === cjs.BbrLimiter && core.CircuitBreaker === cjs.CircuitBreaker,
  instanceOfStandIn: limiter instanceof BbrStandIn,
  instanceOfReal: limiter instanceof cjs.BbrLimiter && limiter.constructor === cjs.BbrLimiter,
  madeByRequireIsInstanceOfStandIn: new cjs.SreBreaker() instanceof core.SreBreaker,
  token: typeof limiter.tryAcquire(),
  subclass: [tracked instanceof Tracked, tracked instanceof BreakerStandIn, tracked.tryAcquire(), tracked.label()],
  name: BbrStandIn.name,
  ownNames: JSON.stringify(Object.getOwnPropertyNames(BbrStandIn)) === JSON.stringify(Object.getOwnPropertyNames(cjs.BbrLimiter)),
  prototype: BbrStandIn.prototype === cjs.BbrLimiter.prototype &&
    Object.getOwnPropertyDescriptor(BbrStandIn, 'prototype').value === cjs.BbrLimiter.prototype,
  callWithoutNew: (() => { try { BreakerStandIn(); return 'called' } catch (e) { return e.constructor.name } })(),
  error: [error instanceof OptionErrorStandIn, error instanceof cjs.InvalidOptionError, core.isInvalidOptionError(error), error.code],
  // Comparing is no use of the value: the binding is still the stand-in until something reads through it.
  shed: [core.Shed !== cjs.Shed, JSON.stringify(core.Shed) === JSON.stringify(cjs.Shed), core.Shed === cjs.Shed],
}))`)
    expect(seen).toEqual({
      standInIsNotReal: true,
      reboundToReal: true,
      instanceOfStandIn: true,
      instanceOfReal: true,
      madeByRequireIsInstanceOfStandIn: true,
      token: 'number',
      subclass: [true, true, true, 'tracked closed'],
      name: 'BbrLimiter',
      ownNames: true,
      prototype: true,
      callWithoutNew: 'TypeError',
      error: [true, true, true, 'ERR_BULWARK_INVALID_OPTION'],
      shed: [true, true, true],
    })
  })

  it('a stand-in that is only looked at (keys, descriptors, freezing) agrees with its value', () => {
    const seen = inEsm<Record<string, unknown>>(`
import { Priority, shedReason } from 'bulwark/core'
const cjs = require('bulwark/core')
const priority = Priority
const reason = shedReason
const keys = JSON.stringify(Object.keys(priority)) === JSON.stringify(Object.keys(cjs.Priority))
const descriptors =
  JSON.stringify(Object.getOwnPropertyDescriptors(priority)) === JSON.stringify(Object.getOwnPropertyDescriptors(cjs.Priority))
Object.freeze(priority)
console.log(JSON.stringify({
  keys,
  descriptors,
  frozenThrough: [Object.isFrozen(priority), Object.isFrozen(cjs.Priority)],
  functionLength: reason.length === cjs.shedReason.length,
  call: reason(cjs.Shed.inFlight) === cjs.shedReason(cjs.Shed.inFlight),
}))`)
    expect(seen).toEqual({
      keys: true,
      descriptors: true,
      frozenThrough: [true, true],
      functionLength: true,
      call: true,
    })
  })

  it.each(specifiers)(
    '%s: every name, once used, is the CommonJS value, and the default export is its module',
    (specifier) => {
      const mismatched = inEsm<string[]>(`
const face = await import(${JSON.stringify(specifier)})
const cjs = require(${JSON.stringify(specifier)})
const wrong = []
const names = Object.keys(face).filter((name) => name !== 'default')
if (JSON.stringify(names.slice().sort()) !== JSON.stringify(Object.keys(cjs).filter((n) => n !== '__esModule').sort())) wrong.push('names')
for (const name of names) {
  // A use that reads nothing of the value's own: asking for its prototype.
  if (typeof face[name] === 'function' || (typeof face[name] === 'object' && face[name] !== null)) Object.getPrototypeOf(face[name])
  if (face[name] !== cjs[name]) wrong.push(name)
}
for (const name of names) if (face.default[name] !== cjs[name]) wrong.push('default.' + name)
console.log(JSON.stringify(wrong))`)
      expect(mismatched).toEqual([])
    },
  )
})
