// Regressions found by the reliability fuzzing: members without a string form and non-string keys threw TypeErrors
// (or hashed as the empty string) instead of InvalidArgumentError.
import { describe, expect, it } from 'vitest'

import { ConsistentHash } from '../../lib/components/subset/consistent-hash'
import { fnv1a32 } from '../../lib/components/subset/fnv1a32'
import { subset } from '../../lib/components/subset/subset'
import { argumentOf } from '../helpers/typed-errors'

describe('subsetting with bad arguments', () => {
  it('names the bad member, members, key or text', () => {
    expect(argumentOf(() => new ConsistentHash([Object.create(null)]))).toBe('member')
    expect(argumentOf(() => new ConsistentHash(5 as unknown as string[]))).toBe('members')
    const ring = new ConsistentHash(['a', 'b'])
    expect(argumentOf(() => ring.get(5 as unknown as string))).toBe('key')
    expect(argumentOf(() => ring.getN(null as unknown as string, 1))).toBe('key')
    expect(argumentOf(() => ring.add({ toString: 0 } as unknown as string))).toBe('member')
    expect(argumentOf(() => subset('k', 'abc' as unknown as string[], 1))).toBe('members')
    expect(argumentOf(() => subset(7 as unknown as string, ['a', 'b'], 1))).toBe('selectKey')
    expect(argumentOf(() => fnv1a32(undefined as unknown as string))).toBe('text')
    // Numbers and other values with a string form stay members, as before.
    expect(new ConsistentHash([1, 2, 3]).size).toBe(3)
  })
})
