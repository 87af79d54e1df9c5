// docs/metrics.md lists exactly the metrics the exporters build: its table is generated from the catalogue in the
// build, and this fails when the page is stale (run node scripts/build-metrics-doc.mjs).
import { spawnSync } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

import {
  METRICS,
  openTelemetryInstrument,
  openTelemetryName,
  prometheusName,
} from '../../lib/ops/metrics/metric-catalog'

const root = path.join(__dirname, '..', '..')

describe('the metric catalogue', () => {
  it('docs/metrics.md is generated from it and up to date', () => {
    const check = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-metrics-doc.mjs'), '--check'], {
      encoding: 'utf8',
    })
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' })
  })

  it('names follow OpenTelemetry’s guidelines: dotted, no unit, no total, unique; counters of things plural', () => {
    const names = METRICS.map((spec) => openTelemetryName(spec, 'bulwark.'))
    expect(new Set(names).size).toBe(names.length)
    for (const spec of METRICS) {
      const name = openTelemetryName(spec, 'bulwark.')
      expect(name).toMatch(/^bulwark(\.[a-z][a-z0-9_]*)+$/)
      expect(name).not.toMatch(/total|seconds|_ms\b|millis/)
    }
    const counting = METRICS.filter((spec) => openTelemetryInstrument(spec) === 'counter' && spec.unit.startsWith('{'))
    for (const name of counting.map((spec) => openTelemetryName(spec, 'bulwark.')))
      expect(name, `${name} counts things`).toMatch(/s$/)
    const upDown = METRICS.filter((spec) => openTelemetryInstrument(spec) === 'updown')
    for (const name of upDown.map((spec) => openTelemetryName(spec, 'bulwark.')))
      expect(name, `${name} is an up-down counter`).toMatch(/(\.count|in_flight|pending|available)$/)
  })

  it('Prometheus names are unique and carry the unit and kind suffixes', () => {
    const names = METRICS.map((spec) => prometheusName(spec, 'bulwark_'))
    expect(new Set(names).size).toBe(names.length)
    for (const spec of METRICS) {
      const name = prometheusName(spec, 'bulwark_')
      expect(name.endsWith('_total'), name).toBe(spec.kind === 'counter')
      expect(name.endsWith('_seconds') || name.endsWith('_seconds_total'), name).toBe(spec.unit === 's')
      expect(name).not.toMatch(/_(count|sum|bucket)$/)
    }
  })
})
