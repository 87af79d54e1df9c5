// A server the tests start as a child process (redis-server, etcd): launched until it answers, killed, restarted
// on the same port, paused (SIGSTOP) and resumed, stopped with its directory removed.
import { type ChildProcess, spawn } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

/** Where a server's binary is: on the PATH or in the usual system directories. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin']
  for (const dir of dirs) {
    const candidate = path.join(dir, name)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

export abstract class ServerProcess {
  protected child: ChildProcess | undefined
  /** A private directory for the server's files, removed by stop(). */
  protected readonly dir: string

  protected constructor(
    readonly binary: string,
    prefix: string,
  ) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** Starts the server (again); resolves once it answers. */
  abstract launch(): Promise<void>

  /**
   * Spawns the binary with `args` and resolves once `answers()` is true, within `timeout` ms; rejects with the
   * server's last output (its "Address already in use" included) when it exits or never answers.
   */
  protected async spawnUntil(args: string[], answers: () => Promise<boolean>, timeout: number): Promise<void> {
    const name = path.basename(this.binary)
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    let output = ''
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4000))
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    const cleanup = () => child.kill('SIGKILL')
    process.once('exit', cleanup)
    child.once('exit', () => process.removeListener('exit', cleanup))
    const until = Date.now() + timeout
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${output}`)
      if (await answers()) return
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`${name} did not answer within ${timeout} ms: ${output}`)
  }

  /** Kills the server (SIGKILL by default) and waits for it to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill(signal)
    await exited
  }

  /** A new server process on the same port. */
  async restart(): Promise<void> {
    await this.kill()
    await this.launch()
  }

  pause(): void {
    this.child?.kill('SIGSTOP')
  }

  resume(): void {
    this.child?.kill('SIGCONT')
  }

  async stop(): Promise<void> {
    this.resume()
    await this.kill()
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}
