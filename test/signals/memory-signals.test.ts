// The sampler thread's memory figures (memoryUsage(), residentMemory(), loadInfo().memory), over a fixture cgroup
// tree and over this machine's own. One process per test file (vitest.config.mts): the sampler is this file's.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { configureSampler, loadInfo, memoryUsage, residentMemory } from '../../lib/index'
import { replaceFile } from '../helpers/replace-file'
import { waitFor } from '../helpers/wait-for'

const MiB = 1 << 20
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-memory-sampler-'))
fs.cpSync(path.join(__dirname, '..', 'fixtures', 'cgroup-memory', 'v2-limit'), root, { recursive: true })
const service = path.join(root, 'sys/fs/cgroup/app.slice/web.service')

afterAll(() => {
  configureSampler({ cgroupRoot: '/', cpuInterval: 500 })
  fs.rmSync(root, { recursive: true, force: true })
})

describe('memory signals from the sampler thread', () => {
  it("reads the cgroup's working set against its limit, each figure one load", async () => {
    configureSampler({ cgroupRoot: root, cpuInterval: 10 })
    // 256 MiB in use less 64 MiB of inactive file pages, against 512 MiB: 375 permille.
    await waitFor(() => memoryUsage() === 375, { what: 'the fixture figures' })
    expect(loadInfo().memory).toMatchObject({
      source: 'cgroup-v2',
      cgroupPath: '/app.slice/web.service',
      usagePath: path.join(service, 'memory.current'),
      note: '',
      used: 192 * MiB,
      limit: 512 * MiB,
      usage: 375,
    })
    replaceFile(path.join(service, 'memory.current'), `${480 * MiB}\n`)
    await waitFor(() => memoryUsage() === 812.5, { what: 'the new usage' })
    replaceFile(path.join(service, 'memory.max'), 'max\n') // the parent's 1 GiB binds now
    await waitFor(() => loadInfo().memory.limit === 1024 * MiB, { what: 'the parent limit' })
    expect(memoryUsage()).toBe(406.25)
  })

  it('falls back to the host when the cgroup has no limit, and says whose figures they are', async () => {
    replaceFile(path.join(root, 'sys/fs/cgroup/app.slice/memory.max'), 'max\n')
    configureSampler({ cgroupRoot: root, cpuInterval: 10 })
    // The fixture host: 8 GiB, 6 GiB available.
    await waitFor(() => memoryUsage() === 250, { what: "the host's figures" })
    expect(loadInfo().memory).toMatchObject({ source: 'host', cgroupPath: '/app.slice/web.service', usage: 250 })
  })

  it("reads this process's resident set as the kernel reports it", async () => {
    configureSampler({ cgroupRoot: '/', cpuInterval: 10 })
    const before = loadInfo().memory.samples
    await waitFor(() => loadInfo().memory.samples > before + 1, { what: 'fresh samples from /' })
    const rss = process.memoryUsage.rss()
    expect(residentMemory()).toBeGreaterThan(rss * 0.5)
    expect(residentMemory()).toBeLessThan(rss * 2)
    const memory = loadInfo().memory
    expect(memory.limit).toBeGreaterThan(0)
    expect(memory.usage).toBeGreaterThan(0)
    expect(memory.usage).toBeLessThanOrEqual(1000)
  })
})
