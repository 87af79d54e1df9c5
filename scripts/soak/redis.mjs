// A private redis-server for the soak when one is installed (PATH), on a free loopback port; undefined otherwise.
import { spawn, spawnSync } from 'node:child_process'
import net from 'node:net'

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

function answers(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setTimeout(200, () => socket.destroy())
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (d) => {
      resolve(d.toString().startsWith('+PONG'))
      socket.end()
    })
    socket.once('error', () => resolve(false))
    socket.once('close', () => resolve(false))
  })
}

export async function startRedis() {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) return undefined
  const port = await freePort()
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  )
  const stop = () => child.kill('SIGKILL')
  process.once('exit', stop)
  for (let i = 0; i < 200; i++) {
    if (await answers(port)) return { url: `redis://127.0.0.1:${port}`, stop }
    await new Promise((r) => setTimeout(r, 25))
  }
  stop()
  return undefined
}
