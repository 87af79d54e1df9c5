import { describe, expect, it } from 'vitest'

import { LruTtlCache } from '../../lib/components/hotkeys/lru-ttl-cache'
import { seededRandom } from '../helpers/seeded-random.mjs'

// The obvious model: an array ordered oldest first.
class ModelCache {
  items: Array<{ key: string; value: number; expiresAt: number }> = []
  constructor(readonly capacity: number) {}
  get(key: string, now: number) {
    const i = this.items.findIndex((e) => e.key === key)
    if (i < 0) return undefined
    const [e] = this.items.splice(i, 1)
    if (e.expiresAt <= now) return undefined
    this.items.push(e)
    return e.value
  }
  set(key: string, value: number, expiresAt: number) {
    const i = this.items.findIndex((e) => e.key === key)
    if (i >= 0) this.items.splice(i, 1)
    else if (this.items.length >= this.capacity) this.items.shift()
    this.items.push({ key, value, expiresAt })
  }
  delete(key: string) {
    const i = this.items.findIndex((e) => e.key === key)
    if (i >= 0) this.items.splice(i, 1)
    return i >= 0
  }
}

describe('LruTtlCache', () => {
  it('agrees with a simple model over 50 000 random operations', () => {
    const random = seededRandom(9)
    const cache = new LruTtlCache<number>(8)
    const model = new ModelCache(8)
    let now = 0
    for (let op = 0; op < 50_000; op++) {
      const key = `k${Math.floor(random() * 20)}`
      const r = random()
      // Each operation's answer from the cache and from the model (a set answers nothing).
      let answers: [unknown, unknown] = [undefined, undefined]
      if (r < 0.45) answers = [cache.get(key, now), model.get(key, now)]
      else if (r < 0.9) {
        const expiresAt = now + 1 + Math.floor(random() * 50)
        cache.set(key, op, expiresAt)
        model.set(key, op, expiresAt)
      } else answers = [cache.delete(key), model.delete(key)]
      expect(answers[0]).toBe(answers[1])
      now += random() < 0.3 ? 1 : 0
      expect(cache.size).toBe(model.items.length)
    }
  })
})
