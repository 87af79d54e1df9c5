// A change of live rules or switches is all or nothing (issue 32, item 5). Before: a switchboard change refused for
// a full board threw inside the rule block's write, leaving its version odd and its lock held, so that every member
// that had not read the table yet ignored every switch while `bulwark top` showed them in force; and a write whose
// lock another member held past the longest wait went ahead without it.
import { afterEach, describe, expect, it } from 'vitest'

import { SharedMemoryError, Switchboard, TokenBucket } from '../../lib/index'
import '../helpers/cleanup-regions'
import { uniqueName } from '../helpers/unique-name'

const PRIORITY_LOW = 3

/** A component's rule block lock word (the Int32 before its sequence), and its own member slot. */
function lockOf(component: Switchboard | TokenBucket): { i32: Int32Array; index: number; member: number } {
  const internals = component as unknown as {
    block?: { sequenceIndex: number }
    rules?: { block: { sequenceIndex: number } }
    region: { i32: Int32Array; member: number }
  }
  const block = internals.block ?? internals.rules?.block
  const { i32, member } = internals.region
  return { i32, member, index: (block as { sequenceIndex: number }).sequenceIndex - 1 }
}

const opened: Array<{ close(): void }> = []
afterEach(() => opened.splice(0).forEach((c) => c.close()))
const keep = <T extends { close(): void }>(component: T): T => (opened.push(component), component)

describe('live rules and switches: a change is all or nothing', () => {
  it('a change refused for a full board leaves the version even, the lock free, and every member obeying', () => {
    const shared = uniqueName('rules-full')
    const board = keep(new Switchboard({ shared, slots: 1 }))
    const member = keep(new Switchboard({ shared, slots: 1 })) // another member: it has not read the board yet
    board.set('priority:low', 'shed')
    const version = board.version
    expect(() => board.set('route:/b', 'shed')).toThrow(/at most 1 switches/)
    expect(board.version).toBe(version) // before: version + 1, odd
    const { i32, index } = lockOf(board)
    expect(Atomics.load(i32, index)).toBe(0) // before: held by this member
    member.refresh()
    expect(member.priorityMode(PRIORITY_LOW)).not.toBe(0) // before: 0, the odd version never read
    expect(member.list().map((s) => s.target)).toEqual(['priority:low'])
  })

  it('a change whose lock another member holds past the longest wait is refused whole (ERR_BULWARK_REGION_BUSY)', () => {
    const board = keep(new Switchboard({ shared: uniqueName('rules-busy') }))
    const bucket = keep(new TokenBucket({ rate: 10, burst: 10, shared: uniqueName('rules-busy') }))
    const changes: Array<[Switchboard | TokenBucket, () => unknown, () => unknown]> = [
      [board, () => board.set('priority:low', 'shed'), () => board.list().length],
      [bucket, () => bucket.configure({ rate: 5 }), () => bucket.rate],
    ]
    for (const [component, change, state] of changes) {
      const { i32, index, member } = lockOf(component)
      const before = state()
      // A live member (this process's own slot: it never dies) holding the lock and never letting go.
      Atomics.store(i32, index, (1 << 13) | (member + 1))
      let error: unknown
      try {
        change()
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(SharedMemoryError) // before: written without the lock
      expect(error).toMatchObject({ code: 'ERR_BULWARK_REGION_BUSY' })
      expect(state()).toEqual(before)
      Atomics.store(i32, index, 0)
      change() // the lock is free again: the same change goes through
      expect(state()).not.toEqual(before)
    }
  })
})
