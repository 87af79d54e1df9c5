import { spawn } from 'child_process'
import { afterEach, describe, expect, it } from 'vitest'

import { defaultNamespace, listRegions } from '../../lib/index'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'
import { cli, closeAll, runCli, startMember } from './top-host'

afterEach(closeAll)

interface Frame {
  interval: number
  regions: Array<
    Record<string, unknown> & {
      region: string
      kind: string
      liveMembers: number
      pids: number[]
      view: Record<string, unknown>
    }
  >
}

/** Two processes sharing one of each component, driven to known states; each reports its own stats(). */
async function drivenHost() {
  const base = uniqueName('top')
  const first = await startMember(base, 0)
  const second = await startMember(base, 1)
  await first.ask('drive')
  await second.ask('drive')
  const [own0, own1] = await Promise.all([first.ask('stats'), second.ask('stats')])
  return {
    base,
    members: [first, second],
    own: own0.stats as Record<string, any>,
    own1: own1.stats as Record<string, any>,
  }
}

describe('bulwark top', () => {
  it('--once --json shows every component of the host as its own stats() sees it, members and pids included', async () => {
    const { base, members, own } = await drivenHost()
    const { code, stdout, stderr } = await runCli(['top', base, '--once', '--json', '--interval', '0.1', '--keys', '3'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const frame = JSON.parse(stdout) as Frame
    expect(frame.interval).toBeGreaterThan(0.05)
    const byKind = Object.fromEntries(frame.regions.map((r) => [r.kind, r]))
    expect(Object.keys(byKind).sort()).toEqual([
      'bbr',
      'circuit',
      'heavykeeper',
      'sliding-window',
      'sre',
      'token-bucket',
    ])
    for (const r of frame.regions) {
      // The members run from this project's fixtures: this project's namespace (docs/guide/trust.md).
      expect(r.region).toBe(`${r.kind}.${defaultNamespace()}.${base}`)
      expect(r.namespace).toBe(defaultNamespace())
      expect(r.status).toBe('ok')
      expect(r.liveMembers).toBe(2)
      expect(r.pids).toEqual(members.map((m) => m.pid).sort((a, b) => a - b))
    }

    const limiter = byKind.bbr.view
    expect(limiter).toMatchObject({
      type: 'limiter',
      load: 1000,
      inFlight: 3,
      maxInFlight: 2,
      admitted: 3,
      shed: 5,
      shedInFlight: 5,
    })
    expect(limiter.byPriority).toEqual(own.limiter.byPriority)
    expect(limiter.byPriority).toMatchObject({
      critical: { admitted: 1 },
      normal: { admitted: 2, shedInFlight: 2 },
      low: { shedInFlight: 3 },
    })
    for (const field of ['inFlight', 'maxInFlight', 'maxPass', 'minRt', 'admitted', 'shed', 'invalidReleases']) {
      expect(limiter[field], field).toBe(own.limiter[field])
    }
    expect(limiter.latency).toEqual(own.limiter.latency)
    expect(limiter.rates).toEqual({ admitted: 0, shed: 0, shedInFlight: 0, shedQueueDelay: 0, shedLatency: 0 })

    expect(byKind.sre.view).toEqual({ type: 'sre-breaker', ...own.sre, failureRatio: 20 / 25 })
    expect(own.sre).toEqual({
      accepts: 5,
      calls: 25,
      dropProbability: 15 / 26,
      state: 'open',
      rules: { version: 0, values: { success: 0.5, minimumCalls: 10 } },
    })

    const circuit = byKind.circuit.view
    expect(circuit).toMatchObject({
      type: 'circuit-breaker',
      state: 'open',
      calls: own.circuit.calls,
      badCalls: own.circuit.badCalls,
      rules: own.circuit.rules, // the thresholds in force, as the members see them
    })
    expect(own.circuit).toMatchObject({ state: 'open', calls: 5, badCalls: 5 })
    expect(circuit.stateAge as number).toBeGreaterThanOrEqual(0)
    expect(circuit.stateAge as number).toBeLessThan(60_000)

    expect(byKind.heavykeeper.view).toMatchObject({ type: 'hot-keys', k: 10, total: own.total, keys: own.keys })
    expect(own.keys).toEqual([
      { key: 'hot-a', count: 300 },
      { key: 'hot-b', count: 300 },
      { key: 'hot-c', count: 50 },
    ])
    expect(own.total).toBe(650)

    expect(byKind['token-bucket'].view).toMatchObject({ type: 'token-bucket', rate: 0.001, burst: 100 })
    expect(byKind['token-bucket'].view.available).toBeCloseTo(own.available, 1)
    expect(own.available).toBeCloseTo(60, 1)
    expect(byKind['sliding-window'].view).toEqual({
      type: 'sliding-window',
      limit: 50,
      window: 600_000,
      used: 20,
      available: own.windowAvailable,
      rules: { version: 0, values: { limit: 50 } },
    })
    expect(own.windowAvailable).toBe(30)
  })

  it('prints the same as a table', async () => {
    const { base } = await drivenHost()
    const { code, stdout } = await runCli(['top', base, '--once', '--interval', '0.1'])
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    expect(lines[0]).toMatch(/^bulwark top · .* · 6 regions · rates over 0\.1 s$/)
    const row = (section: string, kind = '') => {
      const start = lines.findIndex((l) => l.startsWith(section))
      return lines.slice(start + 1).find((l) => l.startsWith(`${defaultNamespace()}/${base}`) && l.includes(kind)) ?? ''
    }
    expect(row('LIMITERS')).toMatch(/\b2 \(2 pids\)\s+100%\s+3 \/ 2\s+0\s+0 \(0 \+ 0 \+ 0\)\s+1\.00 ms\s+1\s+3\s+5$/)
    expect(row('BREAKERS', 'sre')).toMatch(/sre\s+2 \(2 pids\)\s+open\s+58%\s+80%\s+25$/)
    expect(row('BREAKERS', 'circuit')).toMatch(/circuit\s+2 \(2 pids\)\s+open [\d.]+ m?s\s+-\s+100%\s+5$/)
    expect(row('RATE LIMITS', 'token')).toMatch(/token bucket\s+2 \(2 pids\)\s+60\.0 \/ 100\s+refills 0\.0010\/s$/)
    expect(row('RATE LIMITS', 'sliding')).toMatch(/sliding window\s+2 \(2 pids\)\s+30 \/ 50\s+20 used in 10 min$/)
    expect(row('HOT KEYS')).toMatch(/hot-a 300 · hot-b 300 · hot-c 50$/)
  })

  it('does not count as a member: the regions go away when the real members leave while top watches', async () => {
    const { base, members } = await drivenHost()
    const watcher = spawn(process.execPath, [cli, 'top', base, '--json', '--interval', '0.05'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let frames: Frame[] = []
    watcher.stdout.setEncoding('utf8')
    let pending = ''
    watcher.stdout.on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      frames = frames.concat(lines.filter(Boolean).map((l) => JSON.parse(l) as Frame))
    })
    try {
      await waitFor(() => frames.some((f) => f.regions.length === 6), { what: 'a frame with the 6 regions' })
      const mine = () => listRegions().filter((r) => r.endsWith(`.${base}`))
      expect(mine()).toHaveLength(6)
      await Promise.all(members.map((m) => m.ask('close')))
      expect(mine()).toEqual([])
      const seen = frames.length
      await waitFor(() => frames.length > seen + 1, { what: 'a frame drawn after the close' })
      expect(frames[frames.length - 1].regions).toEqual([])
    } finally {
      watcher.kill('SIGTERM')
    }
    const code = await new Promise((resolve) => watcher.once('exit', resolve))
    // SIGTERM is a clean quit; Windows has no signals to catch: kill() terminates the process.
    expect(code).toBe(process.platform === 'win32' ? null : 0)
  })

  it("reports a member that was killed as gone, and the killed process's requests in flight as given back", async () => {
    const { base, members } = await drivenHost()
    members[0].child.kill('SIGKILL')
    await new Promise((resolve) => members[0].child.once('exit', resolve))
    // The survivor's sampler reaps the dead member at its next pass (its reclaimable lanes are zeroed).
    let limiter: Frame['regions'][number] | undefined
    await waitFor(
      async () => {
        const frame = JSON.parse(
          (await runCli(['top', `bbr.${base}`, '--once', '--json', '--interval', '0.05'])).stdout,
        ) as Frame
        limiter = frame.regions[0]
        return limiter.liveMembers === 1 && limiter.view.inFlight === 0
      },
      { what: 'the dead member reaped', interval: 200 },
    )
    expect(limiter).toMatchObject({ liveMembers: 1, pids: [members[1].pid], view: { inFlight: 0, admitted: 3 } })
  })

  it('answers bad arguments with the usage and exit code 2', async () => {
    const bad = await runCli(['top', '--interval', 'soon'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('bulwark top: argument `--interval` must be a number from 0.05 to 3600, got "soon"')
    expect(bad.stderr).toContain('Usage: bulwark top')
    const unknown = await runCli(['nope'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'nope'")
    const help = await runCli(['top', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--once')
  })
})
