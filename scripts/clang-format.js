// Formats (or with --check, verifies) the C++ under native/ with clang-format and the repository's .clang-format.
'use strict'
const { execFileSync, spawnSync } = require('child_process')
const path = require('path')

const root = path.join(__dirname, '..')
const check = process.argv.includes('--check')
const files = execFileSync('git', ['ls-files', 'native/*.cc', 'native/*.h'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean)
const binary = process.env.CLANG_FORMAT ?? 'clang-format'
const args = check ? ['--dry-run', '-Werror', ...files] : ['-i', ...files]
const run = spawnSync(binary, args, { cwd: root, stdio: 'inherit' })
if (run.error) {
  console.error(`${binary} not found: install it (Debian: apt-get install clang-format) or set CLANG_FORMAT`)
  process.exit(1)
}
process.exit(run.status ?? 1)
