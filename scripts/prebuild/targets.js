'use strict'
// Every binary the package ships: where node-gyp-build looks for it (prebuilds/<platform>-<arch>/, file tags) and
// how Zig cross-compiles it on a Linux x64 machine. docs/readme/install.md has the platform table for users.

/**
 * @typedef {object} Target
 * @property {string} id            name used on the command line (`--target linux-arm64-musl`)
 * @property {string} platform      process.platform of the machines that load it
 * @property {string} arch          process.arch of those machines
 * @property {string} file          file name inside prebuilds/<platform>-<arch>/ (node-gyp-build tags)
 * @property {string} zig           `zig c++ -target` triple (a glibc target names its baseline version)
 * @property {'elf'|'macho'|'pe'} format
 * @property {string} machine       ELF e_machine / Mach-O cputype / PE machine the binary must declare
 * @property {string} [glibc]       newest GLIBC_ symbol version the binary may need
 * @property {boolean} [musl]       linked against musl's libc.so
 */

/** @type {Target[]} */
const targets = [
  {
    id: 'linux-x64-glibc',
    platform: 'linux',
    arch: 'x64',
    file: 'bulwark.napi.glibc.node',
    zig: 'x86_64-linux-gnu.2.17',
    format: 'elf',
    machine: 'x86-64',
    glibc: '2.17',
  },
  {
    id: 'linux-arm64-glibc',
    platform: 'linux',
    arch: 'arm64',
    file: 'bulwark.napi.glibc.node',
    zig: 'aarch64-linux-gnu.2.17',
    format: 'elf',
    machine: 'aarch64',
    glibc: '2.17',
  },
  {
    id: 'linux-x64-musl',
    platform: 'linux',
    arch: 'x64',
    file: 'bulwark.napi.musl.node',
    zig: 'x86_64-linux-musl',
    format: 'elf',
    machine: 'x86-64',
    musl: true,
  },
  {
    id: 'linux-arm64-musl',
    platform: 'linux',
    arch: 'arm64',
    file: 'bulwark.napi.musl.node',
    zig: 'aarch64-linux-musl',
    format: 'elf',
    machine: 'aarch64',
    musl: true,
  },
  {
    id: 'darwin-x64',
    platform: 'darwin',
    arch: 'x64',
    file: 'bulwark.napi.node',
    zig: 'x86_64-macos.11.0',
    format: 'macho',
    machine: 'x86-64',
  },
  {
    id: 'darwin-arm64',
    platform: 'darwin',
    arch: 'arm64',
    file: 'bulwark.napi.node',
    zig: 'aarch64-macos.11.0',
    format: 'macho',
    machine: 'arm64',
  },
  {
    id: 'win32-x64',
    platform: 'win32',
    arch: 'x64',
    file: 'bulwark.napi.node',
    zig: 'x86_64-windows-gnu',
    format: 'pe',
    machine: 'x86-64',
  },
]

/** prebuilds/<platform>-<arch>/<file>, relative to the package root. */
function prebuildPath(target) {
  return `prebuilds/${target.platform}-${target.arch}/${target.file}`
}

function findTarget(id) {
  const found = targets.find((target) => target.id === id)
  if (!found) throw new Error(`unknown target ${id}: one of ${targets.map((t) => t.id).join(', ')}`)
  return found
}

module.exports = { targets, prebuildPath, findTarget }
