// `bulwark top` prints hot keys, which come from requests, and region names (issue 13 item 8): nothing printed may
// act on the terminal (a key could otherwise set the window title, clear the screen or reorder text).
import { describe, expect, it } from 'vitest'

import { printable, renderFrame } from '../../lib/ops/top/render-text'

describe('bulwark top escapes what would act on the terminal', () => {
  it.each([
    ['\u001b]0;owned\u0007', '\\u001b]0;owned\\u0007'],
    ['a\u001b[2Jb', 'a\\u001b[2Jb'],
    ['line\nbreak\r', 'line\\u000abreak\\u000d'],
    ['\u009b31m', '\\u009b31m'],
    ['abc\u202edcba', 'abc\\u202edcba'],
    ['\u2066x\u2069', '\\u2066x\\u2069'],
    ['plain-key é 日本', 'plain-key é 日本'],
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
})
