// Preloaded (node --require) to run bulwark as an application that installed neither optional peer: resolving
// prom-client or any @opentelemetry package fails as it would when they are not installed.
'use strict'
const Module = require('module')

const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === 'prom-client' || request.startsWith('prom-client/') || request.startsWith('@opentelemetry/')) {
    const error = new Error(`Cannot find module '${request}'`)
    error.code = 'MODULE_NOT_FOUND'
    throw error
  }
  return resolve.call(this, request, ...rest)
}
