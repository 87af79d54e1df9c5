// OpenTelemetryTraces with the trace SDK 2 (sdk-trace-base) and the API 1.9 it asks for, installed apart in
// test/peers/ (its peer range excludes the API 1.10 that the SDK 3 packages at the root need).
import type * as Api from '@opentelemetry/api'

import { type FinishedSpan, tracesSuite } from './traces-suite'

/** What the suite uses of sdk-trace-base 2 (its types are not the root's SDK 3 ones). */
interface Sdk2 {
  api: typeof Api
  sdk: {
    BasicTracerProvider: new (config: object) => { shutdown(): Promise<void> }
    InMemorySpanExporter: new () => { getFinishedSpans(): FinishedSpan[] }
    SimpleSpanProcessor: new (exporter: object) => object
    AlwaysOnSampler: new () => object
    AlwaysOffSampler: new () => object
  }
  contextManager: { AsyncLocalStorageContextManager: new () => Api.ContextManager }
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { api, sdk, contextManager } = require('otel-sdk-trace-v2') as Sdk2

tracesSuite({
  label: 'SDK 2, API 1.9',
  api,
  register(sampled = true) {
    const exporter = new sdk.InMemorySpanExporter()
    const provider = new sdk.BasicTracerProvider({
      sampler: sampled ? new sdk.AlwaysOnSampler() : new sdk.AlwaysOffSampler(),
      spanProcessors: [new sdk.SimpleSpanProcessor(exporter)],
    })
    const manager = new contextManager.AsyncLocalStorageContextManager().enable()
    api.context.setGlobalContextManager(manager)
    api.trace.setGlobalTracerProvider(provider as unknown as Api.TracerProvider)
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
