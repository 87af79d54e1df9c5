import { execFileSync } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

// Child processes load the built package by its own name (package.json "exports"), with the peers made missing.
const root = path.join(__dirname, '..', '..')
const hide = path.join(__dirname, 'hide-peers.cjs')

function run(code: string, esm = false): unknown {
  const args = ['--require', hide, ...(esm ? ['--input-type=module'] : []), '-e', code]
  return JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }))
}

describe('without the optional peers installed', () => {
  it('the main entry loads and works, and the metrics subpaths fail only when used, with a typed error', () => {
    const result = run(`
      const out = {}
      try { require('prom-client') } catch (e) { out.hidden = e.code }
      const bulwark = require('bulwark')
      const limiter = new bulwark.BbrLimiter()
      out.main = limiter.tryAcquire() >= 0
      const { PrometheusMetrics } = require('bulwark/prometheus')
      const { OpenTelemetryMetrics } = require('bulwark/opentelemetry')
      for (const [key, make] of [['prom', () => new PrometheusMetrics()], ['otel', () => new OpenTelemetryMetrics()]]) {
        try { make() } catch (e) { out[key] = { name: e.name, code: e.code, dependency: e.dependency, message: e.message } }
      }
      // A meter handed in needs nothing from @opentelemetry/api.
      const observed = []
      const meter = {
        createObservableGauge: (name) => ({ name }),
        createObservableCounter: (name) => ({ name }),
        createObservableUpDownCounter: (name) => ({ name }),
        addBatchObservableCallback: (cb) => cb({ observe: (i, v, a) => observed.push([i.name, v, a.name]) }),
        removeBatchObservableCallback: () => {},
      }
      const otel = new OpenTelemetryMetrics({ meter })
      out.withMeter = observed.length === 0
      console.log(JSON.stringify(out))
    `)
    expect(result).toEqual({
      hidden: 'MODULE_NOT_FOUND',
      main: true,
      prom: {
        name: 'MissingPeerDependencyError',
        code: 'ERR_BULWARK_MISSING_PEER',
        dependency: 'prom-client',
        message: "PrometheusMetrics needs the package 'prom-client': npm install prom-client",
      },
      otel: {
        name: 'MissingPeerDependencyError',
        code: 'ERR_BULWARK_MISSING_PEER',
        dependency: '@opentelemetry/api',
        message: "OpenTelemetryMetrics needs the package '@opentelemetry/api': npm install @opentelemetry/api",
      },
      withMeter: true,
    })
  })

  it('the ES module entries load too', () => {
    const result = run(
      `
      import { BbrLimiter } from 'bulwark'
      import { PrometheusMetrics } from 'bulwark/prometheus'
      import { OpenTelemetryMetrics } from 'bulwark/opentelemetry'
      console.log(JSON.stringify([typeof BbrLimiter, typeof PrometheusMetrics, typeof OpenTelemetryMetrics]))
    `,
      true,
    )
    expect(result).toEqual(['function', 'function', 'function'])
  })

  it('with them installed, components from the main entry are reported through the subpath (one copy of the code)', async () => {
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `
        const { BbrLimiter } = require('bulwark')
        const { PrometheusMetrics } = require('bulwark/prometheus')
        const { Registry } = require('prom-client')
        const registry = new Registry()
        const limiter = new BbrLimiter()
        limiter.tryAcquire()
        new PrometheusMetrics({ registry }).add('x', limiter)
        registry.metrics().then((text) => console.log(text))
      `,
      ],
      { cwd: root, encoding: 'utf8' },
    )
    expect(out).toContain('bulwark_limiter_in_flight{name="x"} 1\n')
  })
})
