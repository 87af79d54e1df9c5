// `bulwark top` prints hot keys, which come from requests, and region names (issue 13 item 8): nothing printed may
// act on the terminal (a key could otherwise set the window title, clear the screen or reorder text).
import { describe, expect, it } from 'vitest'

import { printable, printableJson, printableLines, printableTime } from '../../lib/ops/top/printable'
import { renderFrame } from '../../lib/ops/top/render-text'

describe('bulwark top escapes what would act on the terminal', () => {
  it.each([
    ['\u001b]0;owned\u0007', '\\u001b]0;owned\\u0007'],
    ['a\u001b[2Jb', 'a\\u001b[2Jb'],
    ['line\nbreak\r', 'line\\u000abreak\\u000d'],
    ['\u009b31m', '\\u009b31m'],
    ['abc\u202edcba', 'abc\\u202edcba'],
    ['\u2066x\u2069', '\\u2066x\\u2069'],
    // Issue 32, item 6: zero-width and invisible characters passed (they hide text, or smuggle it past a reader).
    ['pay\u200bpal', 'pay\\u200bpal'],
    ['a\u200db\ufeffc\u00add', 'a\\u200db\\ufeffc\\u00add'],
    ['\u{e0041}\u{e0042}', '\\udb40\\udc41\\udb40\\udc42'], // tags: text a reader never sees
    ['x\ufe0f\u3164y', 'x\\ufe0f\\u3164y'], // a variation selector, a filler
    ['lone \ud800', 'lone \\ud800'],
    ['plain-key é 日本 👍', 'plain-key é 日本 👍'],
  ])('%j -> %j', (raw, shown) => {
    expect(printable(raw)).toBe(shown)
  })

  it('in the hot keys of a frame (before: printed raw)', () => {
    const text = renderFrame({
      time: new Date(0).toISOString(),
      interval: 0,
      regions: [
        {
          region: 'heavykeeper.app-1.keys',
          kind: 'heavykeeper',
          namespace: 'app-1',
          name: 'keys',
          bytes: 0,
          liveMembers: 1,
          pids: [1],
          members: [],
          status: 'ok',
          createdAt: 0,
          generation: 0,
          view: { type: 'hot-keys', total: 2, keys: [{ key: '\u001b]0;owned\u0007', count: 2, truncated: false }] },
        } as never,
      ],
    })
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
    expect(text).toContain('\\u001b]0;owned\\u0007 2')
    expect(text).toContain('app-1/keys')
  })

  // Issue 32, item 6: a region's kind and detail, its namespace and a switch's target were printed raw, and a
  // switch's time (a number any process of the user writes) threw when it was no date.
  it('in every cell of a frame: names, kinds, details and switch targets; a switch time that is no date', () => {
    const region = (fields: Record<string, unknown>) => ({
      region: 'x',
      namespace: 'app-1',
      bytes: 0,
      liveMembers: 1,
      pids: [1],
      members: [],
      createdAt: 0,
      generation: 0,
      ...fields,
    })
    const frame = {
      time: new Date(0).toISOString(),
      interval: 0,
      regions: [
        region({ kind: 'evil\u001b[2J', name: 'n\u202eo', status: 'corrupt', detail: 'd\u009b31m' }),
        region({
          kind: 'switches',
          name: 'board',
          status: 'ok',
          view: {
            type: 'switches',
            switches: [
              { target: 'route:/\u001b]0;owned\u0007', mode: 'shed', since: NaN },
              { target: 'route:/b\u200b', mode: 'shed', since: 1e300 },
              { target: 'route:/c', mode: 'fallback', since: Date.UTC(2026, 0, 2, 3, 4, 5, 678) },
            ],
          },
        }),
      ],
    }
    const text = renderFrame(frame as never) // before: RangeError (Invalid time value)
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u202e]/)
    expect(text).toContain('evil\\u001b[2J')
    expect(text).toContain('d\\u009b31m')
    expect(text).toContain('route:/\\u001b]0;owned\\u0007')
    expect(text).toContain('unknown (NaN)')
    expect(text).toContain('unknown (1e+300)')
    expect(text).toContain('2026-01-02T03:04:05Z')
  })

  it('JSON for a terminal: C1, bidirectional and zero-width characters escaped, the same value parsed back', () => {
    const value = { key: 'a\u009b31m\u202eb\u200bc\u{e0041}', n: 1 }
    const json = printableJson(value) // JSON.stringify leaves C1 and the others raw
    expect(json).not.toMatch(/[\u007f-\u009f\u200b\u202e\udb40]/)
    expect(JSON.parse(json)).toEqual(value)
    expect(printableLines('one\ntwo\u001b')).toBe('one\ntwo\\u001b')
    expect(printableTime(-8.64e15 - 1)).toBe('unknown (-8640000000000001)')
  })
})
