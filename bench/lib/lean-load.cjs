// A lean open-loop HTTP/1.1 load generator for high rates on few cores: raw keep-alive sockets, request bytes built
// once, responses parsed just enough (status line, content-length or chunked end). Request i is due at its time
// whether or not earlier ones were answered, and its latency counts from when it was due (as wrk2 does), so a server
// that falls behind cannot hide it. Results have the shape of open-loop.cjs's (summarize/timeline work on both),
// plus what the generator itself managed: when it sent each request, and whether its own loop or its socket pool
// fell behind the schedule.
// Its own CPU per request matters: it shares the host's cores with the server under test, and what it takes, the
// server's workers wait for. So every socket reads into one shared buffer (net's onread) and the response head is
// parsed in place, byte by byte: no Buffer, 'data' event, string or lowercased copy per response. On the ten-x
// scenario's refusals at 918 req/s that took it from about 154 to 120 us of CPU per request (medians of 4 A/B pairs,
// bench/overload/request-cost.mjs, 2 cores loaded 4-6); what is left is mostly the kernel's (one write and one read
// per request on loopback TCP).
'use strict'
const net = require('net')

const CHUNKED_END = Buffer.from('0\r\n\r\n')

function requestBytes(host, path, critical, stamp = '') {
  const priority = critical ? 'x-priority: critical\r\n' : ''
  return Buffer.from(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n${priority}${stamp}\r\n`, 'latin1')
}

/** The host's monotonic clock in ms (CLOCK_MONOTONIC: the same in every process of the machine). */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6

const CR = 13
const LF = 10
const CONTENT_LENGTH = Buffer.from('content-length:', 'latin1')
const TRANSFER_ENCODING = Buffer.from('transfer-encoding:', 'latin1')
const CHUNKED = Buffer.from('chunked', 'latin1')

/** Whether the line at `at` of `buf` starts with `name` (lowercase), whatever the case of its letters. */
function startsWith(buf, at, end, name) {
  if (at + name.length > end) return false
  // | 0x20 lowercases a letter and leaves '-' and ':' as they are (the only other bytes of the names).
  for (let k = 0; k < name.length; k++) if ((buf[at + k] | 0x20) !== name[k]) return false
  return true
}

/** Where `needle` first occurs in buf[from, end), or -1 (the read buffer holds stale bytes after `end`). */
function find(buf, needle, from, end) {
  for (let i = from; i + needle.length <= end; i++) {
    let k = 0
    while (k < needle.length && buf[i + k] === needle[k]) k++
    if (k === needle.length) return i
  }
  return -1
}

/**
 * Where the response at buf[start, end) ends (index after it), or -1 if it is not complete yet; `out.status` gets
 * its status. One pass over the head's bytes: the generator reads every response, so it neither decodes the head to
 * a string nor lowercases it (a copy each, per response, that cost it more CPU than the parse).
 */
function responseEnd(buf, start, end, out) {
  let length = -1
  let chunked = false
  let line = start
  for (let i = start; i + 1 < end; i++) {
    if (buf[i] !== CR || buf[i + 1] !== LF) continue
    if (i === line) {
      const body = i + 2
      // "HTTP/1.1 503 ...": the status is the 10th to 12th bytes.
      out.status = (buf[start + 9] - 48) * 100 + (buf[start + 10] - 48) * 10 + (buf[start + 11] - 48)
      if (length >= 0) return body + length <= end ? body + length : -1
      if (chunked) {
        const at = find(buf, CHUNKED_END, body, end)
        return at < 0 ? -1 : at + CHUNKED_END.length
      }
      return body // no body (a 204, say)
    }
    if (startsWith(buf, line, i, CONTENT_LENGTH)) {
      length = 0
      for (let k = line + CONTENT_LENGTH.length; k < i; k++) {
        const digit = buf[k] - 48
        if (digit >= 0 && digit <= 9) length = length * 10 + digit
      }
    } else if (startsWith(buf, line, i, TRANSFER_ENCODING)) {
      chunked = find(buf, CHUNKED, line + TRANSFER_ENCODING.length, i) >= 0
    }
    line = i + 2
    i++
  }
  return -1
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
    // Every socket reads into one buffer (onread: no Buffer, 'data' event or stream bookkeeping per response); a
    // response is parsed where it lies, and only the bytes of one not yet complete are copied, to the socket's own.
    const readInto = Buffer.allocUnsafe(64 * 1024)
    const received = (socket, nread) => {
      let buf = readInto
      let end = nread
      if (socket.buf !== null) {
        buf = Buffer.concat([socket.buf, readInto.subarray(0, nread)])
        end = buf.length
      }
      const at = responseEnd(buf, 0, end, parsed)
      if (at < 0) {
        socket.buf = buf === readInto ? Buffer.from(readInto.subarray(0, nread)) : buf
        return
      }
      socket.buf = at < end ? Buffer.from(buf.subarray(at, end)) : null
      const i = socket.current
      socket.current = -1
      if (i >= 0) settle(i, parsed.status)
      if (waitHead < waitTail) send(socket, waiting[waitHead++])
      else idle.push(socket)
    }
    const connect = () => {
      const socket = net.connect({
        port,
        host,
        noDelay: true,
        onread: { buffer: readInto, callback: (nread) => received(socket, nread) },
      })
      open++
      opened++
      socket.current = -1
      socket.buf = null
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
