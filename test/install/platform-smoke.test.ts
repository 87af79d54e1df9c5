// The plain-Node smoke script that Windows runs under wine (test/smoke/platform-smoke.cjs) passes natively too, so a
// change of API or behaviour that breaks it shows here first, not only in the wine step of CI.
import { join } from 'path'
import { describe, expect, it } from 'vitest'

import { cleanEnv, packageRoot, run } from './child-process'

describe('platform smoke script', () => {
  it('exercises every native component and passes on this machine', () => {
    const result = run(process.execPath, [join('test', 'smoke', 'platform-smoke.cjs')], packageRoot, cleanEnv())
    if (result.status !== 0) throw new Error(`exited ${result.status}:\n${result.stdout}\n${result.stderr}`)
    const passed = result.stdout.split('\n').filter((line) => line.startsWith('ok '))
    expect(passed.map((line) => line.split(':')[0].slice(3).trim())).toEqual([
      'loads',
      'bbrLimiter',
      'circuitBreaker',
      'sreBreaker',
      'tokenBucket',
      'heavyKeeper',
      'sharedRegion',
      'cpuSignal',
    ])
  })
})
