// Where the 2 cores went during a step (Linux): the server's workers (the children of the cluster's primary, read
// from /proc), the generator (this process) and everything else on the machine (/proc/stat less both). A step whose
// goodput falls short then says whether the workers were busy (refusals, handlers) or idle (the limiter admitted too
// little), and how much the generator and other work took. Elsewhere the samples are empty and the split is blank.
import * as fs from 'fs'

const TICK_MS = 10 // USER_HZ is 100 on Linux

function read(file) {
  try {
    return fs.readFileSync(file, 'latin1')
  } catch {
    return undefined
  }
}

/** utime + stime of `pid`, ms (fields 14 and 15 of /proc/<pid>/stat, after the command's closing parenthesis). */
function processMs(pid) {
  const stat = read(`/proc/${pid}/stat`)
  if (stat === undefined) return 0
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

/**
 * Time on a CPU of every thread of `pid` and of its children (a proxy's threads, nginx's master and workers, a
 * server's workers), ms, from each thread's schedstat (ns: stat's 10 ms ticks are too coarse for the few ms a second
 * a proxy takes at low load); 0 without /proc. A thread that has exited no longer counts.
 */
export function processTreeMs(pid) {
  const children = read(`/proc/${pid}/task/${pid}/children`)?.trim().split(/\s+/).filter(Boolean) ?? []
  let ns = 0
  for (const p of [pid, ...children]) {
    let tasks
    try {
      tasks = fs.readdirSync(`/proc/${p}/task`)
    } catch {
      continue // gone
    }
    for (const task of tasks) ns += Number(read(`/proc/${p}/task/${task}/schedstat`)?.split(' ', 1)[0] ?? 0)
  }
  return ns / 1e6
}

/** The machine's busy and total CPU time, ms (the first line of /proc/stat: idle and iowait are not busy). */
function machineMs() {
  const line = read('/proc/stat')?.split('\n', 1)[0]
  if (line === undefined) return undefined
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
  const total = ticks.reduce((a, b) => a + b, 0)
  return { busy: (total - ticks[3] - ticks[4]) * TICK_MS, total: total * TICK_MS }
}

/** One sample: CPU ms so far of each worker of the cluster `primaryPid`, of this process, and of the machine. */
export function sampleCpu(primaryPid) {
  const children = read(`/proc/${primaryPid}/task/${primaryPid}/children`)?.trim().split(/\s+/).filter(Boolean) ?? []
  const usage = process.cpuUsage()
  return {
    at: performance.now(),
    workers: children.map(processMs),
    generator: (usage.user + usage.system) / 1000,
    machine: machineMs(),
  }
}

/**
 * Between two samples, in % of one core: each worker, the generator, and the rest of the machine (its busy time
 * less the workers and the generator), with the machine's cores, or undefined without /proc.
 */
export function cpuSplit(a, b) {
  if (a?.machine === undefined || b?.machine === undefined || a.workers.length !== b.workers.length) return undefined
  const wall = b.at - a.at
  const pct = (ms) => (100 * ms) / wall
  const workers = b.workers.map((ms, i) => pct(ms - a.workers[i]))
  const generator = pct(b.generator - a.generator)
  const busy = pct(b.machine.busy - a.machine.busy)
  const cores = (b.machine.total - a.machine.total) / wall
  const others = Math.max(0, busy - generator - workers.reduce((x, y) => x + y, 0))
  return { workers, generator, others, idle: Math.max(0, 100 * cores - busy), cores }
}

/**
 * Each worker's loop over [fromMs, toMs) of the host's monotonic clock, from its per-second records (GET /__loop of
 * servers/cpu-cluster.cjs): the mean share of the time its loop was busy, and of the time it was on a CPU.
 */
export function loopShares(records, fromMs, toMs) {
  return records.map((r) => {
    let elu = 0
    let cpu = 0
    let n = 0
    for (let i = 0; i < r.at.length; i++) {
      if (r.at[i] <= fromMs || r.at[i] > toMs) continue
      elu += r.elu[i]
      cpu += r.cpu[i]
      n++
    }
    return n === 0 ? undefined : { busy: elu / n, onCpu: cpu / n }
  })
}

/**
 * "loop busy 99 / 98, on CPU 91 / 90; generator 8, others 3, idle 0" (% of the time, or of one core). A worker whose
 * loop is busy longer than it is on a CPU waited for a core; one whose loop idles had nothing to do.
 */
export function formatSplit(split, loops = []) {
  const r = (x) => x.toFixed(0)
  const parts = []
  if (loops.length > 0 && loops.every((l) => l !== undefined))
    parts.push(
      `loop busy ${loops.map((l) => r(100 * l.busy)).join(' / ')}, on CPU ${loops.map((l) => r(100 * l.onCpu)).join(' / ')}`,
    )
  if (split !== undefined)
    parts.push(`generator ${r(split.generator)}, others ${r(split.others)}, idle ${r(split.idle)}`)
  return parts.join('; ')
}

/**
 * What held a step's goodput, from its split: the workers' loops idling (the limiter admitted too little), the
 * workers waiting for a core (the generator or other work took it), or neither (the workers' own work, handlers and
 * refusals, filled their cores). Undefined without the loops' records.
 */
export function whatCapped(split, loops = []) {
  if (loops.length === 0 || loops.some((l) => l === undefined)) return undefined
  const r = (x) => (100 * x).toFixed(0)
  const idle = loops.reduce((a, l) => a + (1 - l.busy), 0) / loops.length
  const waited = loops.reduce((a, l) => a + Math.max(0, l.busy - l.onCpu), 0) / loops.length
  const causes = []
  if (idle >= 0.05) causes.push(`the workers' loops idled ${r(idle)} % of the time (the limiter admitted too little)`)
  if (waited >= 0.05) {
    const takers =
      split === undefined
        ? ''
        : ` (generator ${split.generator.toFixed(0)} %, others ${split.others.toFixed(0)} % of a core)`
    causes.push(`the workers waited for a core ${r(waited)} % of the time${takers}`)
  }
  if (causes.length > 0) return causes.join('; ')
  return "the workers' own work (handlers and refusals) filled their cores"
}
