// OpenTelemetryMetrics with the metrics SDK 2 and the API 1.9 it asks for, installed apart in test/peers/ (its peer
// range excludes the API 1.10 that SDK 3 at the root needs).
import type * as Api from '@opentelemetry/api'
import type * as Sdk from '@opentelemetry/sdk-metrics'

import { otelSuite } from './opentelemetry-suite'

/* eslint-disable @typescript-eslint/no-require-imports */
const { api, sdk } = require('otel-sdk-metrics-v2') as { api: typeof Api; sdk: typeof Sdk }
const apiPath = require.resolve('@opentelemetry/api', { paths: [require.resolve('otel-sdk-metrics-v2')] })
/* eslint-enable @typescript-eslint/no-require-imports */

otelSuite({ label: 'SDK 2, API 1.9', api, sdk, apiPath })
