// The trace SDK, its context manager and the API as this package resolves them (its own node_modules), not as the
// repository's root does.
'use strict'
module.exports = {
  api: require('@opentelemetry/api'),
  sdk: require('@opentelemetry/sdk-trace-base'),
  contextManager: require('@opentelemetry/context-async-hooks'),
}
