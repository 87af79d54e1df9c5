'use strict'
// The layers of lib/, which `npm run lint` enforces through dependency-cruiser (.dependency-cruiser.cjs):
// docs/architecture.md shows this table, and test/layers/layers.test.ts checks that the two agree and that a file
// importing upward fails. Folders are listed lowest first: a folder may import
// itself and the folders listed before it, never one listed after it, and no module may be part of a cycle. A
// folder's sub-folders are part of it unless they are listed themselves (admission/queue is its own row).
const LAYERS = [
  ['foundation', ['errors', 'common', 'native', 'signals', 'regions', 'live-rules', 'keyed', 'keyed-table']],
  ['admission', ['.', 'limits', 'queue']],
  [
    'components',
    [
      'subset',
      'hotkeys',
      'ratelimit',
      'switches',
      'breakers',
      'resilience',
      'bbr',
      'bulkhead',
      'key-limits',
      'access',
      'routing',
    ],
  ],
  ['guards', ['inbound', 'outbound']],
  ['adapters', ['http', 'express', 'fastify', 'koa', 'grpc', 'undici', 'nestjs', 'hono']],
  ['ops', ['kinds', 'metrics', 'top', 'fleet', 'cli']],
  ['entries', ['.']],
]

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')

/** Every folder in order: its name (`components/bbr`) and the pattern its files match. */
const FOLDERS = LAYERS.flatMap(([layer, folders]) =>
  folders.map((folder) => {
    // A layer's own '.' row holds the files directly in it: lib/admission/*.ts; for entries, lib/index.ts and
    // lib/entries/**.
    if (layer === 'entries') return { layer, name: 'entries', path: '^lib/(index\\.ts$|entries/)' }
    if (folder === '.') return { layer, name: layer, path: `^lib/${escape(layer)}/[^/]+$` }
    return { layer, name: `${layer}/${folder}`, path: `^lib/${escape(layer)}/${escape(folder)}/` }
  }),
)

// One rule per folder: the files of every folder listed after it (the last folder has none).
const upward = FOLDERS.slice(0, -1).map((folder, index) => ({
  name: `layers: ${folder.name}`,
  severity: 'error',
  comment: `lib/${folder.name} may import only ${
    index === 0
      ? 'itself'
      : `itself and: ${FOLDERS.slice(0, index)
          .map((f) => f.name)
          .join(', ')}`
  } (docs/architecture.md)`,
  from: { path: folder.path },
  to: { path: FOLDERS.slice(index + 1).map((f) => f.path) },
}))

module.exports = { LAYERS, FOLDERS, upward }
