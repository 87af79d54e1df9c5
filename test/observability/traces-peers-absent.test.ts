import { execFileSync } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

// A child process loads the built package by its own name, with @opentelemetry/api made missing (hide-peers.cjs).
const root = path.join(__dirname, '..', '..')
const hide = path.join(__dirname, 'hide-peers.cjs')

describe('OpenTelemetryTraces without @opentelemetry/api installed', () => {
  it('fails only when made, with a typed error; guards and their adapters work as before', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--require',
        hide,
        '-e',
        `
        const { OpenTelemetryTraces } = require('bulwark/opentelemetry')
        const { httpGuard } = require('bulwark/http')
        const out = { guard: typeof httpGuard(() => {}).guard.tryAcquire }
        try { new OpenTelemetryTraces() } catch (e) { out.error = { code: e.code, message: e.message } }
        console.log(JSON.stringify(out))
        `,
      ],
      { cwd: root, encoding: 'utf8' },
    )
    expect(JSON.parse(out)).toEqual({
      guard: 'function',
      error: {
        code: 'ERR_BULWARK_MISSING_PEER',
        message: "OpenTelemetryTraces needs the package '@opentelemetry/api': npm install @opentelemetry/api",
      },
    })
  })
})
