// The SDK and the API as this package resolves them (its own node_modules), not as the repository's root does.
'use strict'
module.exports = { api: require('@opentelemetry/api'), sdk: require('@opentelemetry/sdk-metrics') }
