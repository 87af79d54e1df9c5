// OpenTelemetryTraces with the trace SDK 3 (@opentelemetry/sdk-trace, sdk-trace-base's successor) and API 1.10, the
// repository's root install (SDK 3 needs Node 22.15).
import * as api from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import * as sdk from '@opentelemetry/sdk-trace'
import { describe, it } from 'vitest'

import { tracesSuite } from './traces-suite'

const [major, minor] = process.versions.node.split('.').map(Number)
if (major > 22 || (major === 22 && minor >= 15)) {
  tracesSuite({
    label: 'SDK 3, API 1.10',
    api,
    register(sampled = true) {
      const exporter = new sdk.InMemorySpanExporter()
      const provider = new sdk.TracerProvider({
        sampler: sampled ? new sdk.AlwaysOnSampler() : new sdk.AlwaysOffSampler(),
        spanProcessors: [new sdk.SimpleSpanProcessor({ exporter })],
      })
      api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
      api.trace.setGlobalTracerProvider(provider)
      return {
        finished: () => exporter.getFinishedSpans(),
        unregister: async () => {
          api.trace.disable()
          api.context.disable()
          await provider.shutdown()
        },
      }
    },
  })
} else {
  describe('OpenTelemetryTraces (SDK 3, API 1.10)', () => {
    // eslint-disable-next-line vitest/no-disabled-tests -- says in the report which Node this SDK needs
    it.skip(`needs Node 22.15 or later (this is ${process.version})`)
  })
}
