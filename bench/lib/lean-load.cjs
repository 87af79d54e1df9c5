// A lean open-loop HTTP/1.1 load generator for high rates on few cores: raw keep-alive sockets, request bytes built
// once, responses parsed just enough (status line, content-length or chunked end). Request i is due at its time
// whether or not earlier ones were answered, and its latency counts from when it was due (as wrk2 does), so a server
// that falls behind cannot hide it. Results have the shape of open-loop.cjs's (summarize/timeline work on both),
// plus what the generator itself managed: when it sent each request, and whether its own loop or its socket pool
// fell behind the schedule.
'use strict'
const net = require('net')

const HEADER_END = Buffer.from('\r\n\r\n')
const CHUNKED_END = Buffer.from('0\r\n\r\n')

function requestBytes(host, path, critical, stamp = '') {
  const priority = critical ? 'x-priority: critical\r\n' : ''
  return Buffer.from(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n${priority}${stamp}\r\n`, 'latin1')
}

/** The host's monotonic clock in ms (CLOCK_MONOTONIC: the same in every process of the machine). */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6

/** Where a response in `buf` ends (index after it), or -1 if it is not complete yet; `out.status` gets its status. */
function responseEnd(buf, out) {
  const head = buf.indexOf(HEADER_END)
  if (head < 0) return -1
  const text = buf.toString('latin1', 0, head).toLowerCase()
  out.status = Number(text.slice(9, 12))
  const cl = text.indexOf('\ncontent-length:')
  if (cl >= 0) {
    const lineEnd = text.indexOf('\r', cl + 16)
    const length = Number.parseInt(text.slice(cl + 16, lineEnd < 0 ? undefined : lineEnd), 10)
    const end = head + 4 + length
    return buf.length >= end ? end : -1
  }
  if (text.includes('\ntransfer-encoding: chunked')) {
    const end = buf.indexOf(CHUNKED_END, head + 4)
    return end < 0 ? -1 : end + CHUNKED_END.length
  }
  return head + 4 // no body (a 204, say)
}

/**
 * schedule: [{ rate (req/s), seconds, criticalEvery? }]. path: a string or a function of the request's index. Every
 * `criticalEvery`-th request carries `x-priority: critical` (a step's own `criticalEvery` overrides it: a critical
 * rate that stays the same whatever the step's rate). Resolves { due, latency, status, critical, sentAt,
 * durationMs, generator }: typed arrays per request (latency Infinity and status 0 when unanswered at the
 * deadline or failed) and the generator's own account (`capped` names what kept it from the schedule, if anything).
 * With `stampSend`, each request carries `x-sent: <ms>`, the host's monotonic clock when it was written (built per
 * request: for diagnosis, it costs the generator an allocation per request), so the server can tell how long it
 * waited before its handler ran.
 */
function runLeanLoad({
  port,
  host = '127.0.0.1',
  path = '/',
  schedule,
  criticalEvery = 10,
  maxSockets = 1024,
  drainSeconds = 3,
  stampSend = false,
}) {
  const dues = []
  const marks = []
  let t = 0
  for (const step of schedule) {
    const n = Math.round(step.rate * step.seconds)
    const every = step.criticalEvery ?? criticalEvery
    for (let i = 0; i < n; i++) {
      dues.push(t + (i * 1000) / step.rate)
      marks.push(every > 0 && (dues.length - 1) % every === 0 ? 1 : 0)
    }
    t += step.seconds * 1000
  }
  const total = dues.length
  const due = Float64Array.from(dues)
  const latency = new Float64Array(total).fill(Infinity)
  const sentAt = new Float64Array(total).fill(Infinity)
  const status = new Int16Array(total)
  const critical = Uint8Array.from(marks)
  const bytes = new Map()
  const requestFor = (i) => {
    const p = typeof path === 'function' ? path(i) : path
    const isCritical = critical[i] === 1
    if (stampSend) return requestBytes(host, p, isCritical, `x-sent: ${monotonicMs()}\r\n`)
    const key = isCritical ? `!${p}` : p
    let b = bytes.get(key)
    if (b === undefined) bytes.set(key, (b = requestBytes(host, p, isCritical)))
    return b
  }

  const idle = []
  let open = 0
  let opened = 0
  const waiting = new Int32Array(total) // a FIFO of due requests without a socket
  let waitHead = 0
  let waitTail = 0
  let maxWaiting = 0
  let poolFull = false
  let next = 0
  let settled = 0
  const start = performance.now()
  const parsed = { status: 0 }

  return new Promise((resolve) => {
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      clearInterval(pump)
      clearTimeout(deadline)
      for (const s of idle) s.destroy()
      resolve({ due, latency, status, critical, sentAt, durationMs: t, generator: account() })
    }
    const settle = (i, code) => {
      latency[i] = performance.now() - start - due[i]
      status[i] = code
      if (++settled === total) finish()
    }
    const send = (socket, i) => {
      socket.current = i
      sentAt[i] = performance.now() - start
      socket.write(requestFor(i))
    }
    const dispatch = () => {
      while (waitHead < waitTail) {
        let socket = idle.pop()
        if (socket === undefined) {
          if (open >= maxSockets) {
            poolFull = true
            break
          }
          socket = connect()
        }
        send(socket, waiting[waitHead++])
      }
    }
    const connect = () => {
      const socket = net.connect({ port, host, noDelay: true })
      open++
      opened++
      socket.current = -1
      socket.buf = null
      socket.on('data', (chunk) => {
        socket.buf = socket.buf === null ? chunk : Buffer.concat([socket.buf, chunk])
        const end = responseEnd(socket.buf, parsed)
        if (end < 0) return
        socket.buf = end < socket.buf.length ? socket.buf.subarray(end) : null
        const i = socket.current
        socket.current = -1
        if (i >= 0) settle(i, parsed.status)
        if (waitHead < waitTail) send(socket, waiting[waitHead++])
        else idle.push(socket)
      })
      const lost = () => {
        if (socket.lost) return
        socket.lost = true
        open--
        const at = idle.indexOf(socket)
        if (at >= 0) idle.splice(at, 1)
        if (socket.current >= 0) settle(socket.current, 0)
        socket.current = -1
        dispatch()
      }
      socket.on('error', lost)
      socket.on('close', lost)
      return socket
    }
    const pump = setInterval(() => {
      const now = performance.now() - start
      while (next < total && due[next] <= now) waiting[waitTail++] = next++
      if (waitTail - waitHead > maxWaiting) maxWaiting = waitTail - waitHead
      dispatch()
    }, 1)
    const deadline = setTimeout(finish, t + drainSeconds * 1000)

    const account = () => {
      const lags = []
      const sentPerSecond = new Array(Math.ceil(t / 1000)).fill(0)
      for (let i = 0; i < total; i++) {
        if (sentAt[i] === Infinity) continue
        lags.push(sentAt[i] - due[i])
        const s = Math.floor(due[i] / 1000)
        if (s < sentPerSecond.length) sentPerSecond[s]++
      }
      lags.sort((a, b) => a - b)
      const sendLagP99 = lags.length ? lags[Math.floor(0.99 * (lags.length - 1))] : 0
      // Late sends with sockets to spare: the generator's own loop fell behind. With none to spare: the server
      // holds every socket of the pool, which the latency from the due time already counts against it.
      const capped =
        sendLagP99 <= 20
          ? undefined
          : poolFull
            ? `the socket pool (${maxSockets}) held by the server (p99 ${sendLagP99.toFixed(0)} ms late)`
            : `the generator's own loop (p99 ${sendLagP99.toFixed(0)} ms late)`
      return { sendLagP99, maxWaiting, socketsOpened: opened, sentPerSecond, capped }
    }
  })
}

module.exports = { runLeanLoad }
