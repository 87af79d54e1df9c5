import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { MemoryReader, type NativeMemoryReader } from '../helpers/test-natives'

const fixtures = path.join(__dirname, '..', 'fixtures', 'cgroup-memory')
const tempRoots: string[] = []
const MiB = 1 << 20
const GiB = 1 << 30
// Every fixture's /proc/meminfo: 8 GiB, of which 6 GiB available.
const HOST = { used: 2 * GiB, limit: 8 * GiB }
// Every fixture's /proc/self/statm lists 1000 resident pages.
const RESIDENT_PAGES = 1000

afterAll(() => {
  for (const dir of tempRoots) fs.rmSync(dir, { recursive: true, force: true })
})

function copyFixture(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bulwark-memory-${name}-`))
  tempRoots.push(dir)
  fs.cpSync(path.join(fixtures, name), dir, { recursive: true })
  return dir
}

function readerFor(name: string): { root: string; reader: NativeMemoryReader } {
  const root = copyFixture(name)
  return { root, reader: new MemoryReader(root) }
}

describe('MemoryReader: sources and figures on fixture trees', () => {
  type Expected = {
    source: 'host' | 'cgroup-v1' | 'cgroup-v2'
    used: number
    limit: number
    limited: boolean
    note: '' | RegExp
  }
  const cases: Record<string, Expected> = {
    // memory.current 256 MiB less 64 MiB of inactive file pages, against the service's 512 MiB.
    'v2-limit': { source: 'cgroup-v2', used: 192 * MiB, limit: 512 * MiB, limited: true, note: '' },
    'v2-parent-limit': { source: 'cgroup-v2', used: 256 * MiB, limit: GiB, limited: true, note: '' },
    'v2-no-limit': { source: 'cgroup-v2', ...HOST, limited: false, note: '' },
    // A limit above the host's memory never binds: the host runs out first.
    'v2-above-host': { source: 'cgroup-v2', ...HOST, limited: false, note: '' },
    'v2-malformed': { source: 'cgroup-v2', ...HOST, limited: false, note: /memory\.max is malformed: limit ignored/ },
    'v2-inactive-above-usage': { source: 'cgroup-v2', used: 0, limit: 512 * MiB, limited: true, note: '' },
    'v2-no-usage': {
      source: 'host',
      ...HOST,
      limited: false,
      note: /cannot open .*memory\.current.*using host-wide memory/,
    },
    // usage_in_bytes 768 MiB less 256 MiB inactive, against the kernel's hierarchical limit (1 GiB, below its own 2).
    'v1-limit': { source: 'cgroup-v1', used: 512 * MiB, limit: GiB, limited: true, note: '' },
    'v1-unlimited': { source: 'cgroup-v1', ...HOST, limited: false, note: '' },
    'no-cgroup': { source: 'host', ...HOST, limited: false, note: /no \/proc\/self\/cgroup/ },
    // Without MemAvailable: free (2 GiB) + buffers (1 GiB) + cached (1 GiB) of 8 GiB are available.
    'no-cgroup-old-kernel': { source: 'host', used: 4 * GiB, limit: 8 * GiB, limited: false, note: /cgroup/ },
  }

  for (const [name, expected] of Object.entries(cases)) {
    it(`${name}: ${expected.source}, ${expected.used / MiB} MiB of ${expected.limit / MiB} MiB`, () => {
      const { reader } = readerFor(name)
      const info = reader.info()
      expect(info.source).toBe(expected.source)
      expect(info.note).toMatch(expected.note === '' ? /^$/ : expected.note)
      const sample = reader.sample()
      expect(sample).toMatchObject({ used: expected.used, limit: expected.limit, limited: expected.limited })
      // statm counts pages: whatever this machine's page size, a whole number of them, at least 4 KiB each.
      const pageSize = (sample?.resident ?? 0) / RESIDENT_PAGES
      expect(Number.isInteger(pageSize) && pageSize >= 4096).toBe(true)
    })
  }

  it('names the cgroup and the usage file it reads', () => {
    const { root, reader } = readerFor('v2-limit')
    expect(reader.info()).toMatchObject({
      cgroupPath: '/app.slice/web.service',
      usagePath: path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.current'),
    })
    expect(readerFor('v1-limit').reader.info().cgroupPath).toBe('/app')
  })

  it('reads the limit again at every sample: a container resized while it runs', () => {
    const { root, reader } = readerFor('v2-limit')
    expect(reader.sample()?.limit).toBe(512 * MiB)
    fs.writeFileSync(path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.max'), `${256 * MiB}\n`)
    expect(reader.sample()).toMatchObject({ limit: 256 * MiB, limited: true })
    fs.writeFileSync(path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.max'), 'max\n')
    expect(reader.sample()).toMatchObject({ limit: GiB, limited: true }) // the parent's
  })

  it('keeps the cgroup through a usage read that fails once: no figures for that sample', () => {
    const { root, reader } = readerFor('v2-limit')
    const usage = path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.current')
    const before = reader.sample()
    expect(before?.limited).toBe(true)
    const saved = fs.readFileSync(usage)
    fs.rmSync(usage)
    expect(reader.sample()).toBeNull()
    fs.writeFileSync(usage, saved)
    expect(reader.sample()).toMatchObject({ used: before?.used, limit: before?.limit, limited: true })
    expect(reader.info().source).toBe('cgroup-v2')
  })

  it('switches to the host, and says so, when the usage file stays unreadable for three samples', () => {
    const { root, reader } = readerFor('v2-limit')
    expect(reader.sample()?.limited).toBe(true)
    fs.rmSync(path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.current'))
    expect(reader.sample()).toBeNull()
    expect(reader.sample()).toBeNull()
    expect(reader.info().source).toBe('cgroup-v2')
    expect(reader.sample()).toMatchObject({ ...HOST, limited: false })
    expect(reader.info().source).toBe('host')
    expect(reader.info().note).toMatch(/memory\.current became unreadable .*switched to host-wide memory/)
  })

  it('never crashes on malformed or missing files: no figures, and the note says why', () => {
    const malformed = readerFor('no-cgroup-malformed').reader
    expect(malformed.sample()).toBeNull()
    expect(malformed.info().note).toMatch(/meminfo has no valid MemTotal and MemAvailable lines/)
    expect(malformed.info().note).toMatch(/statm is malformed: resident memory unknown/)

    const nothing = readerFor('nothing').reader
    expect(nothing.info()).toMatchObject({ source: 'host', cgroupPath: '' })
    expect(nothing.sample()).toBeNull()
    expect(nothing.info().note).toMatch(/meminfo is missing or unreadable: no memory figures available/)
  })

  it('reads the same figures the kernel reports for this process, from /', () => {
    const reader = new MemoryReader('/')
    const sample = reader.sample()
    if (sample === null) throw new Error(`no memory figures from /: ${reader.info().note}`)
    expect(sample.limit).toBeGreaterThan(0)
    expect(sample.used).toBeGreaterThan(0)
    expect(sample.used).toBeLessThanOrEqual(sample.limit)
    const rss = process.memoryUsage.rss()
    expect(sample.resident).toBeGreaterThan(rss * 0.5)
    expect(sample.resident).toBeLessThan(rss * 2)
  })

  it('refuses an empty root', () => {
    expect(() => new MemoryReader('')).toThrow(/root must be a non-empty directory path/)
  })
})
