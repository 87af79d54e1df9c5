import { printableJson } from './printable'
import { HostWatcher } from './host-watcher'
import { renderFrame } from './render-text'
import { Terminal } from './terminal'
import type { TopArgs } from './top-args'
import type { HostFrame } from './views'

export interface TopIo {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * `bulwark top`: refreshes every `interval` seconds until q, Ctrl-C or SIGTERM; full-screen on a terminal, one
 * frame after another (text or JSON lines) when piped. With --once: one frame, its rates measured over one interval.
 * Resolves with the exit code.
 */
export async function runTop(
  args: TopArgs,
  io: TopIo = { stdin: process.stdin, stdout: process.stdout },
): Promise<number> {
  const watcher = new HostWatcher({ names: args.names, keys: args.keys })
  const print = (frame: HostFrame, interactive: boolean) =>
    args.json ? printableJson(frame) : renderFrame(frame, { width: io.stdout.columns, interactive })
  if (args.once) {
    watcher.sample()
    await sleep(args.interval * 1000)
    io.stdout.write(`${print(watcher.sample(), false)}\n`)
    return 0
  }
  const interactive = Boolean(io.stdout.isTTY) && !args.json
  return new Promise<number>((resolve) => {
    let timer: NodeJS.Timeout | undefined
    const terminal = interactive
      ? new Terminal(io.stdin, io.stdout, (action) => (action === 'quit' ? quit() : tick()))
      : undefined
    const tick = () => {
      clearTimeout(timer)
      const text = print(watcher.sample(), interactive)
      if (terminal) terminal.draw(text)
      else io.stdout.write(args.json ? `${text}\n` : `${text}\n\n`)
      timer = setTimeout(tick, args.interval * 1000)
    }
    const quit = () => {
      clearTimeout(timer)
      terminal?.restore()
      process.off('SIGINT', quit)
      process.off('SIGTERM', quit)
      resolve(0)
    }
    process.on('SIGINT', quit)
    process.on('SIGTERM', quit)
    terminal?.enter()
    tick()
  })
}
