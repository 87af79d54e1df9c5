// The layers of lib/ (scripts/layers.cjs): `npm run lint` runs dependency-cruiser, which must refuse an import that
// runs upward and a cycle, naming the import; docs/architecture.md shows the same table.
import { spawnSync } from 'child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs'
import { createRequire } from 'module'
import { tmpdir } from 'os'
import path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

const root = path.resolve(__dirname, '..', '..')
const require = createRequire(import.meta.url)
const { FOLDERS } = require(path.join(root, 'scripts', 'layers.cjs')) as { FOLDERS: { layer: string; name: string }[] }
const depcruise = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs')
const config = path.join(root, '.dependency-cruiser.cjs')

/** Runs the lint's dependency check on `dir`'s lib/, as `npm run lint` does. */
function cruise(dir: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [depcruise, 'lib', '--config', config], { cwd: dir, encoding: 'utf8' })
  return { status: run.status, output: run.stdout + run.stderr }
}

describe('the layers lint', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bulwark-layers-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    writeFileSync(path.join(dir, file), text)
  }

  it('passes on lib/ as it is', () => {
    const { status, output } = cruise(root)
    expect(output).toContain('no dependency violations found')
    expect(status).toBe(0)
  })

  it('fails on an upward import and on a cycle, naming each import, and lets a downward import pass', () => {
    // foundation/errors -> components/bbr runs up; components/bbr -> foundation/errors runs down.
    write('lib/foundation/errors/low.ts', "import { high } from '../../components/bbr/high'\nexport const low = high\n")
    write(
      'lib/components/bbr/high.ts',
      "import type { Other } from '../../foundation/errors/other'\nexport const high: Other = 1\n",
    )
    write('lib/foundation/errors/other.ts', 'export type Other = number\n')
    // Two modules of one folder that import each other: allowed by the layers, refused as a cycle.
    write('lib/admission/ping.ts', "import { pong } from './pong'\nexport const ping = () => pong\n")
    write('lib/admission/pong.ts', "import { ping } from './ping'\nexport const pong = () => ping\n")
    // A file outside every folder of the layout.
    write('lib/stray/stray.ts', "import { low } from '../foundation/errors/low'\nexport const stray = low\n")
    const { status, output } = cruise(dir)
    expect(status).not.toBe(0)
    expect(output).toContain('layers: foundation/errors: lib/foundation/errors/low.ts → lib/components/bbr/high.ts')
    expect(output).toMatch(/no-cycle: lib\/admission\/p[io]ng\.ts → \s*lib\/admission\/p[io]ng\.ts/)
    expect(output).toContain('lib-in-layout: lib/stray/stray.ts → lib/foundation/errors/low.ts')
    expect(output).not.toContain('lib/components/bbr/high.ts → lib/foundation/errors/other.ts')
  })
})

describe('docs/architecture.md', () => {
  it('lists the folders of scripts/layers.cjs, in order, each with its layer', () => {
    const doc = readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8')
    const rows = [...doc.matchAll(/^\| (\d) (\w+) +\| `([^`]+)` +\|/gm)].map(([, , layer, folder]) => ({
      layer,
      name: folder.replace(/^lib\//, '').replace(/\/$/, ''),
    }))
    expect(rows).toEqual(FOLDERS.map(({ layer, name }) => ({ layer, name })))
  })
})
