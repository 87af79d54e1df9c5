// Every error has a stable code and a type guard that also recognises errors made by another copy of the package.
import { cpSync, mkdtempSync, rmSync } from 'fs'
import { createRequire } from 'module'
import { tmpdir } from 'os'
import path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import {
  AbortedError,
  BreakerOpenError,
  BulwarkError,
  FallbackChainError,
  InvalidArgumentError,
  InvalidOptionError,
  isAbortedError,
  isBreakerOpenError,
  isBulwarkError,
  isFallbackChainError,
  isInvalidArgumentError,
  isInvalidOptionError,
  isMissingPeerDependencyError,
  isNativeLoadError,
  isOverloadError,
  isRedisError,
  isRegionCorruptError,
  isRegionMismatchError,
  isRegionOwnerError,
  isSharedMemoryError,
  MissingPeerDependencyError,
  NativeLoadError,
  OverloadError,
  RedisError,
  RegionCorruptError,
  RegionMismatchError,
  RegionOwnerError,
  SharedMemoryError,
} from '../../lib/index'

const cases: Array<[BulwarkError, string, (e: unknown) => boolean]> = [
  [new OverloadError('in-flight', 2), 'ERR_BULWARK_OVERLOAD', isOverloadError],
  [new BreakerOpenError('payments', 1.2), 'ERR_BULWARK_BREAKER_OPEN', isBreakerOpenError],
  [new AbortedError('stop'), 'ERR_BULWARK_ABORTED', isAbortedError],
  [new InvalidOptionError('rate', -1, 'a number > 0'), 'ERR_BULWARK_INVALID_OPTION', isInvalidOptionError],
  [new InvalidArgumentError('n', -1, 'a number > 0'), 'ERR_BULWARK_INVALID_ARGUMENT', isInvalidArgumentError],
  [new FallbackChainError([new Error('a')]), 'ERR_BULWARK_FALLBACKS_FAILED', isFallbackChainError],
  [new MissingPeerDependencyError('prom-client', 'x', null), 'ERR_BULWARK_MISSING_PEER', isMissingPeerDependencyError],
  [new NativeLoadError('no addon', 'linux-x64', [], null), 'ERR_BULWARK_NATIVE_LOAD', isNativeLoadError],
  [new RedisError('the Redis call failed: READONLY', new Error('READONLY')), 'ERR_BULWARK_REDIS', isRedisError],
  [new RegionMismatchError('r', 'mismatch'), 'ERR_BULWARK_REGION_MISMATCH', isRegionMismatchError],
  [new RegionCorruptError('r', 'corrupt'), 'ERR_BULWARK_REGION_CORRUPT', isRegionCorruptError],
  [new RegionOwnerError('r', 'not yours', '/dev/shm/x', 0), 'ERR_BULWARK_REGION_OWNER', isRegionOwnerError],
  [new SharedMemoryError('ERR_BULWARK_REGION_FULL', 'r', 'full'), 'ERR_BULWARK_REGION_FULL', isSharedMemoryError],
  [new SharedMemoryError('ERR_BULWARK_REGION_BUSY', 'r', 'busy'), 'ERR_BULWARK_REGION_BUSY', isSharedMemoryError],
  [new SharedMemoryError('ERR_BULWARK_SYSTEM', 'r', 'eacces'), 'ERR_BULWARK_SYSTEM', isSharedMemoryError],
]

describe('typed errors', () => {
  it.each(cases)('%s has its stable code and its guard', (error, code, guard) => {
    expect(error.code).toBe(code)
    expect(error).toBeInstanceOf(BulwarkError)
    expect(isBulwarkError(error)).toBe(true)
    expect(isBulwarkError(error, code as never)).toBe(true)
    expect(guard(error)).toBe(true)
    // Exactly one guard says yes (isSharedMemoryError covers its three codes).
    expect(cases.filter(([, , other]) => other !== guard && other(error))).toHaveLength(0)
  })

  it('guards say no to anything else, without throwing', () => {
    const plain = Object.assign(new Error('x'), { code: 'ERR_BULWARK_OVERLOAD' })
    for (const value of [plain, null, undefined, 0, 'ERR_BULWARK_OVERLOAD', { code: 'ERR_BULWARK_OVERLOAD' }]) {
      expect(isBulwarkError(value)).toBe(false)
      expect(isOverloadError(value)).toBe(false)
    }
    expect(isBulwarkError(new OverloadError('in-flight'), 'ERR_BULWARK_ABORTED')).toBe(false)
  })

  it('OverloadError and BreakerOpenError carry retryAfter in whole seconds, rounded up, and no stack', () => {
    const shed = new OverloadError('queue-delay', 0.2)
    expect([shed.reason, shed.retryAfter]).toEqual(['queue-delay', 1])
    expect(new OverloadError('in-flight').retryAfter).toBe(0)
    expect(new BreakerOpenError(undefined, 3.8).retryAfter).toBe(4)
    expect(new BreakerOpenError(undefined, -5).retryAfter).toBe(0)
    expect(shed.stack).toBe(`OverloadError: ${shed.message}`)
  })

  describe('across copies of the package', () => {
    // A second copy of the compiled package, as two versions of bulwark in one node_modules tree would have (its
    // per-file build, whose error modules load without the addon).
    const dir = mkdtempSync(path.join(tmpdir(), 'bulwark-copy-'))
    const dist = path.join(__dirname, '..', '..', 'dist-internal')
    cpSync(dist, dir, { recursive: true })
    const other = createRequire(path.join(dir, 'x.js'))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    it("recognises the other copy's errors, where instanceof cannot", () => {
      const { OverloadError: OtherOverload } = other('./foundation/errors/overload-error.js')
      const { BreakerOpenError: OtherOpen } = other('./foundation/errors/breaker-open-error.js')
      const shed = new OtherOverload('in-flight', 1)
      expect(shed).not.toBeInstanceOf(OverloadError)
      expect(isOverloadError(shed)).toBe(true)
      expect(isBulwarkError(shed, 'ERR_BULWARK_OVERLOAD')).toBe(true)
      expect(isBreakerOpenError(new OtherOpen('x'))).toBe(true)
      expect(isOverloadError(new OtherOpen('x'))).toBe(false)
    })
  })
})
