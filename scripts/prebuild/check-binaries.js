#!/usr/bin/env node
'use strict'
// Fails when a prebuilt binary would not load where docs/readme/install.md says it does: a wrong file format or
// architecture, a GLIBC_ symbol newer than the target's baseline, a shared C++ runtime (libstdc++, libc++,
// libgcc_s, libwinpthread) the user's machine may lack, any library that is not part of the system (or node.exe),
// a glibc binary that needs musl or the reverse, no napi_register_module_v1 export, or symbols left unstripped.
// ELF is read with binutils' readelf, PE with objdump, Mach-O load commands here and its exports with llvm-nm.
// Usage: node scripts/prebuild/check-binaries.js [target id ...]   (default: every target; a missing file fails)
const { spawnSync } = require('child_process')
const fs = require('fs')
const path = require('path')

const { targets, prebuildPath, findTarget } = require('./targets')

const root = path.join(__dirname, '..', '..')
const sharedCxxRuntime = /libstdc\+\+|libc\+\+|libgcc_s|libunwind|libwinpthread/i
// What every machine of a format has: the C library's parts (glibc, musl), libSystem and Apple's frameworks, and
// the DLLs of Windows itself (msvcrt.dll included: the system's C runtime, not a redistributable) plus node.exe.
const systemLibraries = {
  elf: /^(libc\.so(\.6)?|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux[\w.-]*\.so\.\d)$/,
  macho: /^(\/usr\/lib\/libSystem\.B\.dylib|\/System\/Library\/Frameworks\/.+)$/,
  pe: /^(node\.exe|kernel32|advapi32|msvcrt|ntdll|bcrypt|ws2_32|user32|userenv|psapi|iphlpapi|api-ms-win-[\w-]+)(\.dll)?$/i,
}
const entryPoint = 'napi_register_module_v1'

function tool(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr || result.error}`)
  return result.stdout
}

function compareVersions(a, b) {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number))
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0)
  }
  return 0
}

const formatNames = { elf: 'ELF', macho: 'Mach-O', pe: 'PE' }
const elfMachines = { 0x3e: 'x86-64', 0xb7: 'aarch64' }
const machoMachines = { 0x01000007: 'x86-64', 0x0100000c: 'arm64' }
const peMachines = { 0x8664: 'x86-64', 0xaa64: 'arm64' }

function elfFacts(file, bytes) {
  const dynamic = tool('readelf', ['-d', '-W', file])
  const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1])
  const dynamicSymbols = tool('readelf', ['--dyn-syms', '-W', file])
  const versions = [...dynamicSymbols.matchAll(/@GLIBC_([0-9.]+)/g)].map((m) => m[1])
  const newestGlibc = versions.sort(compareVersions).at(-1) ?? null
  const stripped = !/\.symtab\b/.test(tool('readelf', ['-S', '-W', file]))
  const exported = [...dynamicSymbols.matchAll(/ (?:GLOBAL|WEAK) +DEFAULT +\d+ (\S+)$/gm)].map((m) => m[1])
  return { machine: elfMachines[bytes.readUInt16LE(18)], needed, newestGlibc, stripped, exported }
}

// Mach-O 64-bit: header (32 bytes), then load commands; LC_LOAD_DYLIB (0xc) names a library, LC_DYSYMTAB (0xb)
// counts the local symbols (nlocalsym, its second field), which stripping removes.
function machoFacts(file, bytes) {
  const commands = bytes.readUInt32LE(16)
  const needed = []
  let offset = 32
  let localSymbols = Infinity
  for (let i = 0; i < commands; i++) {
    const [command, size] = [bytes.readUInt32LE(offset), bytes.readUInt32LE(offset + 4)]
    if (command === 0xc) {
      const nameAt = offset + bytes.readUInt32LE(offset + 8)
      needed.push(bytes.toString('latin1', nameAt, bytes.indexOf(0, nameAt)))
    }
    if (command === 0xb) localSymbols = bytes.readUInt32LE(offset + 12)
    offset += size
  }
  const names = tool('llvm-nm', ['--extern-only', '--defined-only', '--just-symbol-name', file]).split('\n')
  const exported = names.map((name) => name.replace(/^_/, ''))
  return { machine: machoMachines[bytes.readUInt32LE(4)], needed, stripped: localSymbols === 0, exported }
}

function peFacts(file, bytes) {
  const header = bytes.readUInt32LE(0x3c)
  const isPe = bytes.toString('latin1', 0, 2) === 'MZ' && bytes.toString('latin1', header, header + 4) === 'PE\0\0'
  const dump = isPe ? tool('objdump', ['-p', file]) : ''
  const needed = [...dump.matchAll(/DLL Name: (\S+)/g)].map((m) => m[1])
  const noSymbols = /PointerToSymbolTable\s+0+\b/.test(dump) || !/PointerToSymbolTable/.test(dump)
  const exportTable = dump.split('[Ordinal/Name Pointer] Table')[1] ?? ''
  const exported = [...exportTable.matchAll(/^\s+\[\s*\d+\] (\S+)$/gm)].map((m) => m[1])
  const machine = isPe ? peMachines[bytes.readUInt16LE(header + 4)] : undefined
  return { machine, needed, stripped: noSymbols, exported }
}

// Each format's magic bytes.
const magic = {
  elf: (bytes) => bytes.readUInt32BE(0) === 0x7f454c46,
  macho: (bytes) => bytes.readUInt32LE(0) === 0xfeedfacf,
  pe: (bytes) => bytes.toString('latin1', 0, 2) === 'MZ',
}

// What the binary needs, read the target's way; a file of another format has no machine (so it fails the check).
function factsOf(target, file, bytes) {
  if (bytes.length < 64 || !magic[target.format](bytes)) {
    return { machine: undefined, needed: [], stripped: true, exported: [entryPoint] }
  }
  if (target.format === 'elf') return elfFacts(file, bytes)
  return target.format === 'macho' ? machoFacts(file, bytes) : peFacts(file, bytes)
}

/** Problems with the binary of `target` at `file` (an empty list when it is fit to ship). */
function checkBinary(target, file) {
  if (!fs.existsSync(file)) return [`${target.id}: ${path.relative(root, file)} is missing`]
  const bytes = fs.readFileSync(file)
  const facts = factsOf(target, file, bytes)
  const problems = []
  if (facts.machine !== target.machine) problems.push(`is not ${formatNames[target.format]} for ${target.machine}`)
  const runtime = facts.needed.filter((lib) => sharedCxxRuntime.test(lib))
  if (runtime.length > 0) problems.push(`links a shared C++ runtime: ${runtime.join(', ')}`)
  const foreign = facts.needed.filter((lib) => !sharedCxxRuntime.test(lib) && !systemLibraries[target.format].test(lib))
  if (foreign.length > 0) problems.push(`needs libraries that are not part of the system: ${foreign.join(', ')}`)
  if (!facts.exported.includes(entryPoint)) problems.push(`does not export ${entryPoint}`)
  if (!facts.stripped) problems.push('is not stripped')
  if (target.glibc) {
    if (facts.newestGlibc && compareVersions(facts.newestGlibc, target.glibc) > 0) {
      problems.push(`needs GLIBC_${facts.newestGlibc}, newer than the baseline ${target.glibc}`)
    }
    if (!facts.needed.includes('libc.so.6')) problems.push(`does not link glibc (needs ${facts.needed.join(', ')})`)
  }
  if (target.musl) {
    if (facts.newestGlibc) problems.push(`needs GLIBC_${facts.newestGlibc} symbols`)
    if (!facts.needed.includes('libc.so'))
      problems.push(`does not link musl's libc.so (needs ${facts.needed.join(', ')})`)
  }
  if (target.format === 'pe' && !facts.needed.some((lib) => lib.toLowerCase() === 'node.exe')) {
    problems.push('does not import N-API from node.exe')
  }
  return problems.map((problem) => `${target.id}: ${path.relative(root, file)} ${problem}`)
}

/** A one-line summary of what the binary needs at run time (for the build log). */
function describeBinary(target, file) {
  const bytes = fs.readFileSync(file)
  const facts = factsOf(target, file, bytes)
  const glibc = facts.newestGlibc ? `, GLIBC_${facts.newestGlibc} at most` : ''
  return `${target.id}: ${bytes.length} bytes, needs ${facts.needed.join(' ')}${glibc}`
}

if (require.main === module) {
  const chosen = process.argv.length > 2 ? process.argv.slice(2).map(findTarget) : targets
  const problems = chosen.flatMap((target) => checkBinary(target, path.join(root, prebuildPath(target))))
  for (const target of chosen) {
    const file = path.join(root, prebuildPath(target))
    if (fs.existsSync(file)) console.log(describeBinary(target, file))
  }
  if (problems.length > 0) {
    console.error(`check-binaries: ${problems.length} problem(s):\n${problems.join('\n')}`)
    process.exit(1)
  }
}

module.exports = { checkBinary, describeBinary }
