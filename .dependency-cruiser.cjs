'use strict'
// `npm run lint` runs dependency-cruiser with this: lib/ imports only downward, in the order of scripts/layers.cjs,
// and has no cycle.
const { FOLDERS, upward } = require('./scripts/layers.cjs')

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'A module that imports itself through others: take the shared part down a layer (docs/architecture.md).',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    {
      name: 'lib-in-layout',
      severity: 'error',
      comment:
        'Every file of lib/ sits in a folder of the layout (docs/architecture.md); add a new folder there first.',
      from: { path: '^lib/', pathNot: FOLDERS.map((f) => f.path).concat('^lib/esm/') },
      to: {},
    },
  ],
  options: {
    // Type-only imports count: a layer that names a higher layer's types depends on it all the same.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    moduleSystems: ['cjs', 'es6'],
  },
}
