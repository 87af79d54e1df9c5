// One node:http request as node:http hands it to a listener, without a network: fresh request and response objects
// on an unconnected socket, and the events node:http emits for a response ended at once. For in-process per-request
// costs of the adapters (bench/integrations.bench.mjs, bench/gateway.bench.mjs).
import { createRequire } from 'module'

const require = createRequire(import.meta.url)
const http = require('http')
const net = require('net')
const socket = new net.Socket()

/** A function that runs `listener` once on a fresh request and response. */
export const onFreshRequest = (listener) => () => {
  const req = new http.IncomingMessage(socket)
  const res = new http.ServerResponse(req)
  res.assignSocket(socket)
  listener(req, res)
  res.emit('prefinish')
  res.emit('finish')
  res.detachSocket(socket)
  res.emit('close')
}
