// Shared by the `bulwark top` tests: member processes driven to known states, and the CLI run as a user would.
import { ChildProcess, execFile, fork } from 'child_process'
import * as path from 'path'

const root = path.join(__dirname, '..', '..')
export const cli = path.join(root, 'dist', 'cjs', 'ops', 'cli', 'bulwark.js')
const memberScript = path.join(root, 'test', 'fixtures', 'top-member.cjs')

export interface Member {
  child: ChildProcess
  pid: number
  ask(op: string): Promise<Record<string, unknown>>
}

const members: Member[] = []

/** Detaches every member still running (so that no region is left behind), then makes sure they are gone. */
export async function closeAll(): Promise<void> {
  await Promise.all(
    members.splice(0).map(async (m) => {
      if (m.child.connected) await Promise.race([m.ask('close'), new Promise((r) => setTimeout(r, 2000))])
      if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL')
    }),
  )
}

export async function startMember(base: string, role: number): Promise<Member> {
  const child = fork(memberScript, [JSON.stringify({ base, role })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const ready = (await new Promise((resolve) => child.once('message', resolve))) as { pid: number }
  const ask = (op: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      child.once('message', (m) => resolve(m as Record<string, unknown>))
      child.send({ op })
    })
  const member = { child, pid: ready.pid, ask }
  members.push(member)
  return member
}

/** Runs `bulwark top` with `args`; resolves with its exit code and output. */
export function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error ? ((error as { code?: number }).code ?? 1) : 0
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr })
    })
  })
}
