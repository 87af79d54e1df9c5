// HAProxy and nginx as the bench's children, in front of a gateway under test: each started from a template of
// bench/overload/proxies/ rendered into a directory of its own under the system's temp dir (config, pid file,
// error log), listening on a free loopback port, and stopped at the end of its run, or when the bench exits
// whatever the reason (an exception, Ctrl-C). The Debian packages are installed with apt-get when missing.
import { spawn, spawnSync } from 'child_process'
import * as fs from 'fs'
import * as net from 'net'
import * as os from 'os'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { processTreeMs } from './cpu-split.mjs'

const templatesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'proxies')
const SBIN = ['/usr/local/sbin', '/usr/sbin', '/sbin']
const PACKAGES = { haproxy: 'haproxy', nginx: 'nginx' }

function binary(name) {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...SBIN]
  return dirs.map((dir) => path.join(dir, name)).find((file) => fs.existsSync(file))
}

function run(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() }
}

/** Installs the Debian packages of the proxies this machine lacks (apt-get; through sudo -n when not root). */
export function ensureProxiesInstalled() {
  const missing = Object.keys(PACKAGES).filter((name) => binary(name) === undefined)
  if (missing.length === 0) return
  const packages = missing.map((name) => PACKAGES[name])
  const [command, prefix] = process.getuid?.() === 0 ? ['apt-get', []] : ['sudo', ['-n', 'apt-get']]
  console.log(`installing ${packages.join(' ')} with apt-get...`)
  let r = run(command, [...prefix, 'install', '-y', '-qq', ...packages])
  if (!r.ok) {
    run(command, [...prefix, 'update', '-qq'])
    r = run(command, [...prefix, 'install', '-y', '-qq', ...packages])
  }
  const still = missing.filter((name) => binary(name) === undefined)
  if (still.length > 0) throw new Error(`could not install ${still.join(', ')} with apt-get: ${r.out.slice(-400)}`)
}

/** { haproxy, nginx }: "2.6.12 (Debian 2.6.12-1+deb12u4)", as the tables name what they measured. */
export function proxyVersions() {
  const packaged = (pkg) => run('dpkg-query', ['-W', '-f', '${Version}', pkg])
  const named = (upstream, pkg) => {
    const debian = packaged(pkg)
    return debian.ok && debian.out ? `${upstream} (Debian ${debian.out})` : upstream
  }
  const haproxy = run(binary('haproxy'), ['-v']).out.match(/version ([\d.]+)/)?.[1] ?? '?'
  const nginx = run(binary('nginx'), ['-v']).out.match(/nginx\/([\d.]+)/)?.[1] ?? '?'
  return { haproxy: named(haproxy, 'haproxy'), nginx: named(nginx, 'nginx') }
}

/** A loopback port free right now (the kernel's pick; a start that loses it to another process is retried). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** `template` (a file of bench/overload/proxies/) with each {{field}} replaced, written to `file`. */
function render(template, fields, file) {
  const text = fs.readFileSync(path.join(templatesDir, template), 'utf8').replace(/{{(\w+)}}/g, (_, name) => {
    if (fields[name] === undefined) throw new Error(`${template}: no value for {{${name}}}`)
    return String(fields[name])
  })
  fs.writeFileSync(file, text)
}

// Every proxy still running, stopped by the exit hooks if the bench ends before it stops them.
const running = new Set()
let hooked = false

function killNow(proxy) {
  // The master first: killed after its workers, nginx's would start new ones in the meantime.
  for (const pid of [proxy.child.pid, ...proxy.workerPids()]) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  fs.rmSync(proxy.dir, { recursive: true, force: true })
}

function hookExit() {
  if (hooked) return
  hooked = true
  process.once('exit', () => running.forEach(killNow))
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      running.forEach(killNow)
      process.exit(signal === 'SIGINT' ? 130 : 143)
    })
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function accepts(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.once('connect', () => resolve(socket.destroy() ?? true))
    socket.once('error', () => resolve(false))
  })
}

async function waitUntilListening(proxy, logFile) {
  let code
  proxy.child.once('exit', (c, signal) => (code = c ?? signal))
  for (let waited = 0; waited < 10_000 && code === undefined; waited += 25) {
    if (await accepts(proxy.port)) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').trim().slice(-600) : ''
  throw new Error(`${proxy.kind} did not listen on ${proxy.port} (${code ? `exited with ${code}` : 'timeout'}): ${log}`)
}

/** Children of `pid` (nginx's workers), from /proc; [] elsewhere. */
function childPids(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** The arguments that run `kind` on the config rendered into `dir` from `template` and `fields`. */
function configure(kind, template, fields, dir) {
  if (kind === 'haproxy') {
    render(template, fields, path.join(dir, 'haproxy.cfg'))
    return ['-db', '-f', path.join(dir, 'haproxy.cfg')]
  }
  const limits = path.join(dir, 'limits.conf')
  if (template === undefined) fs.writeFileSync(limits, '')
  else render(template, fields, limits)
  render('nginx.conf', { ...fields, limits }, path.join(dir, 'nginx.conf'))
  // -e: the error log from the start (before reading the config, nginx would open the package's own).
  return ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')]
}

async function startOnce(kind, template, fields) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bulwark-${kind}-`))
  fs.chmodSync(dir, 0o755) // nginx's workers drop root for `nobody`
  let args
  let port
  try {
    port = await freePort()
    args = configure(kind, template, { ...fields, port, dir }, dir)
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw Object.assign(error, { final: true })
  }
  const logFile = path.join(dir, kind === 'nginx' ? 'error.log' : 'stderr.log')
  const out = fs.openSync(path.join(dir, 'stderr.log'), 'a')
  const child = spawn(binary(kind), args, { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  const proxy = {
    kind,
    port,
    dir,
    child,
    workerPids: () => childPids(child.pid),
    /** CPU time of the proxy's processes so far (haproxy's threads, nginx's master and workers), ms. */
    cpuMs: () => processTreeMs(child.pid),
    async stop() {
      running.delete(proxy)
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM') // both stop at once on SIGTERM (nginx's master stops its workers first)
        const late = setTimeout(() => killNow(proxy), 5000)
        await gone
        clearTimeout(late)
      }
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
  running.add(proxy)
  hookExit()
  try {
    await waitUntilListening(proxy, logFile)
  } catch (error) {
    await proxy.stop()
    throw error
  }
  return proxy
}

/**
 * Starts `kind` (haproxy | nginx) from `template` (haproxy: the whole config; nginx: the limits file included in
 * nginx.conf, or undefined for none) with `fields` ({{gateway}} the port it forwards to, and the limits' own).
 * Resolves { port, cpuMs(), stop() }.
 */
export async function startProxy(kind, template, fields) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(kind, template, fields)
    } catch (error) {
      if (error.final || attempt === 3) throw error // a port lost to another process between the pick and the bind, at most twice
    }
  }
}
