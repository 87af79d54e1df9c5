import { spawn, spawnSync } from 'child_process'
import { EventEmitter } from 'events'
import { describe, expect, it } from 'vitest'

import { keyAction, Terminal } from '../../lib/ops/top/terminal'
import { waitFor } from '../helpers/wait-for'
import { cli } from './top-host'

const hasScript = spawnSync('script', ['--version']).status === 0

class FakeTty extends EventEmitter {
  isTTY = true
  raw: boolean[] = []
  paused = true
  setRawMode(on: boolean) {
    this.raw.push(on)
  }
  resume() {
    this.paused = false
  }
  pause() {
    this.paused = true
  }
}

describe('bulwark top on a terminal', () => {
  it('quits on q, Q, Ctrl-C, Ctrl-D and Escape; refreshes on space; ignores other keys', () => {
    for (const key of ['q', 'Q', '\u0003', '\u0004', '\u001b']) expect(keyAction(key), JSON.stringify(key)).toBe('quit')
    expect(keyAction(' ')).toBe('refresh')
    expect(keyAction('x')).toBeUndefined()
    expect(keyAction('xq')).toBe('quit') // keys typed faster than a refresh arrive together
  })

  it('enters raw mode and the alternate screen, and restores both exactly once', () => {
    const input = new FakeTty()
    let written = ''
    const actions: string[] = []
    const terminal = new Terminal(input, { write: (t: string) => (written += t) }, (a) => actions.push(a))
    terminal.enter()
    expect(input.raw).toEqual([true])
    expect(input.paused).toBe(false)
    input.emit('data', Buffer.from('q'))
    expect(actions).toEqual(['quit'])
    terminal.restore()
    terminal.restore()
    expect(input.raw).toEqual([true, false])
    expect(input.paused).toBe(true)
    expect(written).toBe('\u001b[?1049h\u001b[?25l\u001b[?25h\u001b[?1049l')
    input.emit('data', 'q')
    expect(actions).toEqual(['quit']) // no longer listening
  })

  it.skipIf(!hasScript)(
    'exits cleanly when q is typed in a real pseudo-terminal, leaving the screen as it was',
    async () => {
      // script(1) runs top on a pty: raw mode and the alternate screen are real; its stdin is what we type.
      const child = spawn(
        'script',
        ['-qfec', `${process.execPath} ${cli} top --interval 0.2 no-such-region`, '/dev/null'],
        {
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      )
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      await waitFor(() => out.includes('q quits'), { what: 'top drawing its first frame' })
      child.stdin.write('q')
      const code = await new Promise((resolve) => child.once('exit', resolve))
      expect(code).toBe(0)
      expect(out).toContain('\u001b[?1049h')
      expect(out.lastIndexOf('\u001b[?1049l')).toBeGreaterThan(out.lastIndexOf('q quits'))
    },
  )
})
