// Regression: a name of a megabyte made inspectRegions throw a SyntaxError (the pattern compiled from it was too
// large) instead of an InvalidOptionError (found by the reliability fuzzing).
import { describe, expect, it } from 'vitest'

import { inspectRegions } from '../../lib/ops/top/inspect'
import { fieldOf } from '../helpers/typed-errors'

describe('inspectRegions names', () => {
  it('refuses a name longer than a region name can be, and accepts one of 200 characters', () => {
    expect(fieldOf(() => inspectRegions({ names: ['k'.repeat(1 << 20)] }))).toBe('names')
    expect(fieldOf(() => inspectRegions({ names: ['k'.repeat(201)] }))).toBe('names')
    expect(inspectRegions({ names: ['k'.repeat(200)] })).toEqual([])
  })
})
