// The declarations as a TypeScript user meets them: a project with only the packed files (package.json and dist/),
// @types/node and the peers an entry needs, type-checked (skipLibCheck off, so our .d.ts files are checked too) by
// TypeScript 5.9, 6 and 7 under each module resolution a project uses: nodenext (an ES module and a CommonJS file),
// bundler, and node10, the default of `module: commonjs` before TypeScript 7, where `exports` is not read and the
// subpaths resolve through `typesVersions` (docs/guide/install.md, "TypeScript").
import { execFile } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { promisify } from 'util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = path.join(__dirname, '..', '..')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>
  typesVersions: Record<string, Record<string, string[]>>
}
const specifiers = Object.keys(pkg.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'bulwark' : `bulwark/${subpath.slice(2)}`))

const compilers = [
  { name: 'TypeScript 5.9', tsc: path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), node10: [] },
  {
    name: 'TypeScript 6',
    tsc: path.join(root, 'node_modules', 'typescript-6', 'bin', 'tsc'),
    node10: ['--ignoreDeprecations', '6.0'],
  },
  // TypeScript 7 removed node10 resolution.
  { name: 'TypeScript 7', tsc: path.join(root, 'node_modules', 'typescript-7', 'bin', 'tsc'), node10: undefined },
]

/** Every entry imported whole, and the core used as the README's quick start uses it. */
function consumerSource(): string {
  const imports = specifiers.map((s, i) => `import * as entry${i} from '${s}'`).join('\n')
  return `${imports}
import { BbrLimiter, Priority, SreBreaker, TokenBucket, isOverloadError } from 'bulwark/core'
import { httpGuard } from 'bulwark/http'
import type { IncomingMessage, ServerResponse } from 'node:http'

const limiter = new BbrLimiter()
const token: number = limiter.tryAcquire(Priority.critical)
if (token >= 0) limiter.release(token)
const admitted: boolean = new TokenBucket({ rate: 100, burst: 10 }).tryAcquire()
const stock: Promise<number> = new SreBreaker({ shared: 'inventory' }).execute(async () => 42)
const app = (req: IncomingMessage, res: ServerResponse) => res.end(req.url)
const listener = httpGuard(app, { limiter: { shared: 'api' } })
export const used = [admitted, stock, listener, isOverloadError, ${specifiers.map((_, i) => `entry${i}`).join(', ')}]
`
}

let project = ''

beforeAll(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-consumer-'))
  const modules = path.join(project, 'node_modules')
  const installed = path.join(modules, 'bulwark')
  fs.mkdirSync(installed, { recursive: true })
  fs.copyFileSync(path.join(root, 'package.json'), path.join(installed, 'package.json'))
  fs.cpSync(path.join(root, 'dist'), path.join(installed, 'dist'), { recursive: true })
  // @types/node, and the peers whose types an entry names (prom-client, @opentelemetry/api, rxjs): nothing else.
  for (const dependency of ['@types/node', 'undici-types', 'prom-client', '@opentelemetry/api', 'rxjs']) {
    fs.mkdirSync(path.dirname(path.join(modules, dependency)), { recursive: true })
    fs.symlinkSync(path.join(root, 'node_modules', dependency), path.join(modules, dependency))
  }
  fs.writeFileSync(path.join(project, 'package.json'), '{ "type": "module" }\n')
  fs.writeFileSync(path.join(project, 'consumer.mts'), consumerSource())
  fs.writeFileSync(path.join(project, 'consumer.cts'), consumerSource())
})

afterAll(() => fs.rmSync(project, { recursive: true, force: true }))

/** tsc's diagnostics (empty when the files type-check). */
async function typeCheck(tsc: string, args: string[], files: string[]): Promise<string> {
  const common = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--types', 'node', '--target', 'es2022']
  try {
    await run(process.execPath, [tsc, ...common, ...args, ...files], { cwd: project, timeout: 120_000 })
    return ''
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string }
    return `${failure.stdout ?? ''}${failure.stderr ?? ''}` || failure.message
  }
}

describe('the declarations in a TypeScript project', () => {
  it('typesVersions maps every subpath of exports to the same declarations (node10 reads no exports)', () => {
    const mapped = Object.fromEntries(
      Object.entries(pkg.exports)
        .filter(([subpath, target]) => subpath !== '.' && typeof target === 'object')
        .map(([subpath, target]) => [subpath.slice(2), [(target as { types: string }).types]]),
    )
    expect(pkg.typesVersions).toEqual({ '*': mapped })
  })

  for (const { name, tsc, node10 } of compilers) {
    it.concurrent(
      `${name}: every entry type-checks under nodenext, bundler and node10`,
      async () => {
        const results = await Promise.all([
          typeCheck(tsc, ['--module', 'nodenext', '--moduleResolution', 'nodenext'], ['consumer.mts', 'consumer.cts']),
          typeCheck(tsc, ['--module', 'preserve', '--moduleResolution', 'bundler'], ['consumer.mts']),
          node10 && typeCheck(tsc, ['--module', 'commonjs', '--moduleResolution', 'node', ...node10], ['consumer.cts']),
        ])
        expect(results).toEqual(['', '', node10 && ''])
      },
      180_000,
    )
  }

  it('fails on a type error, so that the checks above can fail', async () => {
    fs.writeFileSync(
      path.join(project, 'wrong.mts'),
      `import { TokenBucket } from 'bulwark/core'\nnew TokenBucket({ rate: 'fast' })\n`,
    )
    const output = await typeCheck(
      compilers[2].tsc,
      ['--module', 'nodenext', '--moduleResolution', 'nodenext'],
      ['wrong.mts'],
    )
    expect(output).toMatch(/wrong\.mts.*error TS2322/)
  }, 120_000)
})
