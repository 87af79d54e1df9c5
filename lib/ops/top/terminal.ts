/** What a key pressed in `bulwark top` does. */
export function keyAction(input: string): 'quit' | 'refresh' | undefined {
  for (const ch of input) {
    // q, Ctrl-C (raw mode delivers it as a byte, not a signal), Ctrl-D, Escape.
    if (ch === 'q' || ch === 'Q' || ch === '\u0003' || ch === '\u0004' || ch === '\u001b') return 'quit'
  }
  return input.includes(' ') || input.includes('r') ? 'refresh' : undefined
}

interface TtyIn {
  isTTY?: boolean
  setRawMode?(on: boolean): unknown
  on(event: 'data', listener: (data: Buffer | string) => void): unknown
  off(event: 'data', listener: (data: Buffer | string) => void): unknown
  resume(): unknown
  pause(): unknown
}

interface TtyOut {
  write(text: string): unknown
}

/**
 * The interactive screen: the alternate buffer with the cursor hidden, keys read one by one in raw mode. restore()
 * puts the terminal back as it was, once, whatever way the program ends.
 */
export class Terminal {
  private active = false
  private readonly input: TtyIn
  private readonly output: TtyOut
  private readonly onData: (data: Buffer | string) => void
  private readonly onExit = () => this.restore()

  constructor(input: TtyIn, output: TtyOut, onKey: (action: 'quit' | 'refresh') => void) {
    this.input = input
    this.output = output
    this.onData = (data) => {
      const action = keyAction(String(data))
      if (action !== undefined) onKey(action)
    }
  }

  enter(): void {
    this.active = true
    process.once('exit', this.onExit)
    this.output.write('\u001b[?1049h\u001b[?25l')
    if (this.input.isTTY && this.input.setRawMode) this.input.setRawMode(true)
    this.input.on('data', this.onData)
    this.input.resume()
  }

  draw(text: string): void {
    this.output.write(`\u001b[H\u001b[2J${text}\n`)
  }

  restore(): void {
    if (!this.active) return
    this.active = false
    process.off('exit', this.onExit)
    this.input.off('data', this.onData)
    if (this.input.isTTY && this.input.setRawMode) this.input.setRawMode(false)
    this.input.pause()
    this.output.write('\u001b[?25h\u001b[?1049l')
  }
}
