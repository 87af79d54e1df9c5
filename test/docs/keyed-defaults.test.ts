// docs/guide/trust.md states the default bounds of the keyed collections, local and shared: the table must say what
// the code does (issue 32, item 9: the page read as if a KeyedLimiter held 1000 keys; it holds 10 000).
import * as fs from 'fs'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

import {
  BreakerGroup,
  BulkheadPool,
  KeyConcurrencyLimiter,
  KeyedLimiter,
  SreBreaker,
  TokenBucket,
} from '../../lib/index'
import '../helpers/cleanup-regions'
import { uniqueName } from '../helpers/unique-name'

const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'guide', 'trust.md'), 'utf8')

/** The table's `maxKeys` of `collection` (its row's first cell): local, shared. */
function stated(collection: string): [number, number] {
  const cell = collection.replace(/[()]/g, '\\$&')
  const row = new RegExp(`^\\| ${cell}\\s*\\| ([\\d ]+?)\\s*\\| ([\\d ]+?)\\s*\\|`, 'm').exec(page)
  if (row === null) throw new Error(`docs/guide/trust.md has no row for ${collection}`)
  return [Number(row[1].replace(/ /g, '')), Number(row[2].replace(/ /g, ''))]
}

/** What a collection made with no `maxKeys` holds: local, then shared (closed at once, no key made). */
const made: Record<string, (shared?: string) => { maxKeys: number; close(): void }> = {
  '`KeyedLimiter` (table form)': (shared) => new KeyedLimiter({ rate: 1, shared }),
  '`KeyConcurrencyLimiter`': (shared) => new KeyConcurrencyLimiter({ max: 1, shared }),
  '`KeyedLimiter` (factory form)': (shared) =>
    new KeyedLimiter((_key, s) => new TokenBucket({ rate: 1, shared: s }), { shared }),
  '`BreakerGroup`': (shared) => new BreakerGroup((_key, s) => new SreBreaker({ shared: s }), { shared }),
  '`BulkheadPool`': (shared) => new BulkheadPool({ shared }),
}

describe('docs/guide/trust.md: the keyed collections’ default bounds', () => {
  it.each(Object.keys(made))('%s: as the table says, local and shared', (collection) => {
    const local = made[collection]()
    const shared = made[collection](uniqueName('bounds'))
    try {
      expect([local.maxKeys, shared.maxKeys]).toEqual(stated(collection))
    } finally {
      local.close()
      shared.close()
    }
  })
})
