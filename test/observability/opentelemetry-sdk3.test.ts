// OpenTelemetryMetrics with the metrics SDK 3 and API 1.10 (the repository's root install; SDK 3 needs Node 22.15).
import * as api from '@opentelemetry/api'
import * as sdk from '@opentelemetry/sdk-metrics'
import { describe, it } from 'vitest'

import { otelSuite } from './opentelemetry-suite'

const [major, minor] = process.versions.node.split('.').map(Number)
if (major > 22 || (major === 22 && minor >= 15)) {
  otelSuite({ label: 'SDK 3, API 1.10', api, sdk, apiPath: require.resolve('@opentelemetry/api') })
} else {
  describe('OpenTelemetryMetrics (SDK 3, API 1.10)', () => {
    // eslint-disable-next-line vitest/no-disabled-tests -- says in the report which Node this SDK needs
    it.skip(`needs Node 22.15 or later (this is ${process.version})`)
  })
}
