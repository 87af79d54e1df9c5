import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import type { NativeLoadInfo } from '../lib/foundation/native/native-types'
import { CpuReader, type NativeCpuReader } from './helpers/test-natives'

const fixtures = path.join(__dirname, 'fixtures', 'cgroup')
const tempRoots: string[] = []
// Every fixture reader gets this affinity, so cores never depend on the machine running the tests.
const AFFINITY = 8
const t0 = 1_000_000_000
const HALF_SECOND_NS = 500e6

afterAll(() => {
  for (const dir of tempRoots) fs.rmSync(dir, { recursive: true, force: true })
})

/** A writable copy of a fixture tree. */
function copyFixture(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bulwark-cgroup-${name}-`))
  tempRoots.push(dir)
  fs.cpSync(path.join(fixtures, name), dir, { recursive: true })
  return dir
}

function readerFor(name: string): { root: string; reader: NativeCpuReader } {
  const root = copyFixture(name)
  return { root, reader: new CpuReader(root, AFFINITY) }
}

function write(root: string, file: string, content: string): void {
  fs.writeFileSync(path.join(root, file), content)
}

const V1_LIMIT_USAGE = 'sys/fs/cgroup/cpu,cpuacct/app/cpuacct.usage'
const V1_FRACTIONAL_USAGE = 'sys/fs/cgroup/cpuacct/cpuacct.usage'
const V2_LIMIT_USAGE = 'sys/fs/cgroup/app.slice/web.service/cpu.stat'

/** /proc/stat's first line with the given user, system, idle and iowait ticks. */
function procStat(user: number, system: number, idle: number, iowait: number): string {
  return `cpu  ${user} 0 ${system} ${idle} ${iowait} 0 0 0 0 0\ncpu0 1 0 1 1 1 0 0 0 0 0\nintr 1 2 3\n`
}

// Two /proc/stat readings: total +1000 ticks, of which idle +500 and iowait +100, so busy +400 (400 permille).
const HOST_STAT_BEFORE = procStat(10000, 5000, 80000, 1000)
const HOST_STAT_AFTER = procStat(10300, 5100, 80500, 1100)

describe('CpuReader: detection on fixture trees', () => {
  type Expected = Partial<Omit<NativeLoadInfo, 'note'>> & { note: '' | RegExp }
  const cases: Record<string, Expected> = {
    'v1-limit': { source: 'cgroup-v1', cores: 2, quotaCores: 2, cpusetCpus: 4, cgroupPath: '/app', note: '' },
    'v1-fractional': { source: 'cgroup-v1', cores: 0.2, quotaCores: 0.2, cpusetCpus: 2, note: '' },
    'v1-hybrid-no-limit': { source: 'cgroup-v1', cores: 2, quotaCores: 0, cpusetCpus: 2, note: '' },
    'v2-limit': {
      source: 'cgroup-v2',
      cores: 1.5,
      quotaCores: 1.5,
      cpusetCpus: 4,
      cgroupPath: '/app.slice/web.service',
      note: '',
    },
    'v2-no-limit': { source: 'cgroup-v2', cores: 4, quotaCores: 0, cpusetCpus: 4, note: '' },
    'v2-nested': { source: 'cgroup-v2', cores: 0.5, quotaCores: 0.5, cpusetCpus: 8, note: '' },
    'v2-namespace': { source: 'cgroup-v2', cores: 0.3, quotaCores: 0.3, cpusetCpus: 4, note: '' },
    'v2-nested-missing': {
      source: 'cgroup-v2',
      cores: 1,
      quotaCores: 1,
      cgroupPath: '/system.slice/docker-abc.scope',
      note: /not found under .*: using the mount root/,
    },
    'v2-usage-only': { source: 'cgroup-v2', cores: AFFINITY, quotaCores: 0, note: /without the cpu controller/ },
    'v2-malformed': {
      source: 'cgroup-v2',
      cores: AFFINITY,
      quotaCores: 0,
      cpusetCpus: 0,
      note: /cpu\.max is malformed.*cpuset\.cpus\.effective is malformed/,
    },
    'v1-malformed-limits': {
      source: 'cgroup-v1',
      cores: AFFINITY,
      quotaCores: 0,
      cpusetCpus: 0,
      note: /cfs_period_us is 0: quota ignored.*cpuset\.cpus is malformed/,
    },
    'v1-usage-not-a-number': { source: 'host', cgroupPath: '', note: /cpuacct\.usage is not a number.*host-wide/ },
    'missing-files': { source: 'host', note: /cpu\.stat: No such file.*cpuacct\.usage: No such file.*host-wide/ },
    'no-cgroup': { source: 'host', cores: AFFINITY, quotaCores: 0, cgroupPath: '', note: /no \/proc\/self\/cgroup/ },
  }

  for (const [name, expected] of Object.entries(cases)) {
    it(`${name}`, () => {
      const root = path.join(fixtures, name)
      const info = new CpuReader(root, AFFINITY).info()
      const { note, ...fields } = expected
      expect(info).toMatchObject({ ...fields, affinityCpus: AFFINITY })
      expect(info.note).toMatch(note === '' ? /^$/ : note)
      expect(info.usagePath.startsWith(root)).toBe(true)
    })
  }

  it('reads the usage file of the process own cgroup, not the mount root', () => {
    const info = new CpuReader(path.join(fixtures, 'v1-limit'), AFFINITY).info()
    expect(info.usagePath).toBe(path.join(fixtures, 'v1-limit', V1_LIMIT_USAGE))
  })

  it('takes the affinity mask when it is the smallest limit', () => {
    expect(new CpuReader(path.join(fixtures, 'v2-no-limit'), 3).info().cores).toBe(3)
  })

  it('reports a missing /proc/stat and never samples', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-cgroup-empty-'))
    tempRoots.push(root)
    const reader = new CpuReader(root, AFFINITY)
    const info = reader.info()
    expect(info.source).toBe('host')
    expect(info.note).toMatch(/proc\/stat: No such file.*no CPU usage available/)
    expect(info.cores).toBe(AFFINITY)
    expect(reader.sample(t0)).toBeNull()
    expect(reader.sample(t0 + HALF_SECOND_NS)).toBeNull()
  })
})

describe('CpuReader: sampling', () => {
  // [what, fixture, usage file, its content at the priming call (or the fixture's), its content 500 ms later, permille]
  const oneStep: Array<[string, string, string, string | null, string, number]> = [
    ['v1: 100 ms of CPU with 2 cores', 'v1-limit', V1_LIMIT_USAGE, null, '1100000000\n', 100],
    ['v1: 50 ms of CPU with 0.2 cores', 'v1-fractional', V1_FRACTIONAL_USAGE, null, '5050000000', 500],
    ['v1: 100 ms of CPU with 0.2 cores', 'v1-fractional', V1_FRACTIONAL_USAGE, null, '5100000000', 1000],
    ['v1: 200 ms of CPU with 0.2 cores, clamped', 'v1-fractional', V1_FRACTIONAL_USAGE, null, '5200000000', 1000],
    ['v2: usage_usec +300 ms with 1.5 cores', 'v2-limit', V2_LIMIT_USAGE, null, 'usage_usec 2300000\nuser_usec 1', 400],
    ['host: busy ticks over total ticks, host-wide', 'no-cgroup', 'proc/stat', HOST_STAT_BEFORE, HOST_STAT_AFTER, 400],
  ]

  for (const [what, fixture, file, before, after, expected] of oneStep) {
    it(`${what} over 500 ms is ${expected} permille`, () => {
      const { root, reader } = readerFor(fixture)
      if (before !== null) write(root, file, before)
      expect(reader.sample(t0)).toBeNull()
      write(root, file, after)
      expect(reader.sample(t0 + HALF_SECOND_NS)).toBeCloseTo(expected, 9)
    })
  }

  it('host: no tick elapsed gives no sample and keeps the baseline', () => {
    const { root, reader } = readerFor('no-cgroup')
    write(root, 'proc/stat', HOST_STAT_BEFORE)
    expect(reader.sample(t0)).toBeNull()
    expect(reader.sample(t0 + HALF_SECOND_NS)).toBeNull()
    write(root, 'proc/stat', HOST_STAT_AFTER)
    expect(reader.sample(t0 + 4 * HALF_SECOND_NS)).toBeCloseTo(400, 9)
  })

  it('a counter that goes backwards gives 0, then measures from the new value', () => {
    const { root, reader } = readerFor('v1-limit')
    expect(reader.sample(t0)).toBeNull()
    write(root, V1_LIMIT_USAGE, '400000000\n')
    expect(reader.sample(t0 + HALF_SECOND_NS)).toBe(0)
    write(root, V1_LIMIT_USAGE, '500000000\n')
    expect(reader.sample(t0 + 2 * HALF_SECOND_NS)).toBeCloseTo(100, 9)
  })

  it('the same wall time twice gives no sample (never divides by zero)', () => {
    const { root, reader } = readerFor('v1-limit')
    expect(reader.sample(t0)).toBeNull()
    write(root, V1_LIMIT_USAGE, '1100000000\n')
    expect(reader.sample(t0)).toBeNull()
    expect(reader.sample(t0 + HALF_SECOND_NS)).toBeCloseTo(100, 9)
  })

  it('a usage read that fails once gives no sample, and the next measures the whole span', () => {
    const { root, reader } = readerFor('v1-limit')
    expect(reader.sample(t0)).toBeNull()
    fs.rmSync(path.join(root, V1_LIMIT_USAGE))
    expect(reader.sample(t0 + HALF_SECOND_NS)).toBeNull()
    expect(reader.info().source).toBe('cgroup-v1')
    write(root, V1_LIMIT_USAGE, '1200000000\n') // +0.2 s of CPU over 1 s on 2 cores
    expect(reader.sample(t0 + 2 * HALF_SECOND_NS)).toBeCloseTo(100, 9)
    expect(reader.info().note).toBe('')
  })

  it('a usage file gone for three samples in a row switches to the host source and says so', () => {
    const { root, reader } = readerFor('v1-limit')
    write(root, 'proc/stat', HOST_STAT_BEFORE)
    expect(reader.sample(t0)).toBeNull()
    fs.rmSync(path.join(root, V1_LIMIT_USAGE))
    expect(reader.sample(t0 + HALF_SECOND_NS)).toBeNull()
    expect(reader.sample(t0 + 2 * HALF_SECOND_NS)).toBeNull()
    expect(reader.info().source).toBe('cgroup-v1')
    expect(reader.sample(t0 + 3 * HALF_SECOND_NS)).toBeNull()
    const info = reader.info()
    expect(info.source).toBe('host')
    expect(info.cgroupPath).toBe('')
    expect(info.usagePath).toBe(path.join(root, 'proc/stat'))
    expect(info.note).toMatch(/cpuacct\.usage became unreadable .*switched to host-wide \/proc\/stat/)
    // The host source was primed on the failing call: the next one measures.
    write(root, 'proc/stat', HOST_STAT_AFTER)
    expect(reader.sample(t0 + 4 * HALF_SECOND_NS)).toBeCloseTo(400, 9)
  })

  it('a usage file that turns to garbage switches to the host source too', () => {
    const { root, reader } = readerFor('v2-limit')
    expect(reader.sample(t0)).toBeNull()
    write(root, V2_LIMIT_USAGE, 'usage_usec lots\n')
    for (let i = 1; i <= 3; i++) expect(reader.sample(t0 + i * HALF_SECOND_NS)).toBeNull()
    expect(reader.info().source).toBe('host')
    expect(reader.info().note).toMatch(/no valid usage_usec line/)
  })
})

describe('CpuReader: arguments', () => {
  it('rejects a root that is not a non-empty string', () => {
    expect(() => new CpuReader(3 as unknown as string)).toThrow(TypeError)
    expect(() => new CpuReader('')).toThrow(TypeError)
  })

  it('rejects an affinity that is not a whole number >= 0', () => {
    expect(() => new CpuReader('/', -1)).toThrow(TypeError)
    expect(() => new CpuReader('/', 1.5)).toThrow(TypeError)
  })

  it('rejects a wall time that is not a non-negative number', () => {
    const reader = new CpuReader(path.join(fixtures, 'v1-limit'), AFFINITY)
    expect(() => reader.sample('1' as unknown as number)).toThrow(TypeError)
    expect(() => reader.sample(-1)).toThrow(TypeError)
    expect(() => reader.sample(Number.NaN)).toThrow(TypeError)
  })
})

describe('CpuReader: this machine', () => {
  it('finds a source, positive cores and samples within [0, 1000]', () => {
    const reader = new CpuReader('/')
    const info = reader.info()
    expect(['host', 'cgroup-v1', 'cgroup-v2']).toContain(info.source)
    expect(info.cores).toBeGreaterThan(0)
    const start = process.hrtime.bigint()
    expect(reader.sample(Number(start))).toBeNull()
    // Spin (not sleep) for 50 ms so that even host-wide /proc/stat ticks advance.
    const end = start + 50_000_000n
    while (process.hrtime.bigint() < end) {}
    const permille = reader.sample(Number(process.hrtime.bigint()))
    expect(permille).not.toBeNull()
    expect(permille).toBeGreaterThanOrEqual(0)
    expect(permille).toBeLessThanOrEqual(1000)
  })
})
