import { existsSync } from 'fs'
import { join } from 'path'

// node-gyp-build lists build/Release, build/Debug and prebuilds/ and reads package.json before it picks a binary,
// and loading it costs a worker about 0.5 MB (docs/guide/install.md, "Entry points and what loading costs"). The
// binaries bulwark builds and ships have known names (scripts/prebuild/targets.js), so the usual cases are one
// existsSync each, in node-gyp-build's order. Anything else (build/Debug, another libc, the environment variables
// that change its choice) returns undefined, and node-gyp-build decides.
const OVERRIDES = ['BULWARK_PREBUILD', 'npm_config_arch', 'npm_config_platform', 'ARM_VERSION']

function prebuildFile(): string | undefined {
  switch (process.platform) {
    case 'linux': {
      const libc = process.env.LIBC ?? (existsSync('/etc/alpine-release') ? 'musl' : 'glibc')
      return libc === 'glibc' || libc === 'musl' ? `bulwark.napi.${libc}.node` : undefined
    }
    case 'darwin':
    case 'win32':
      return 'bulwark.napi.node'
    default:
      return undefined
  }
}

/** The binary node-gyp-build would load from `root`, when it is one of bulwark's own; undefined otherwise. */
export function knownAddonPath(root: string): string | undefined {
  if (OVERRIDES.some((name) => process.env[name] !== undefined)) return undefined
  // PREBUILDS_ONLY (as node-gyp-build reads it): never build/, as CI's qemu and wine runs ask.
  if (!process.env.PREBUILDS_ONLY) {
    const release = join(root, 'build', 'Release', 'bulwark.node')
    if (existsSync(release)) return release
    // A build/ folder without that file (a Debug build, a failed one): node-gyp-build knows the rules.
    if (existsSync(join(root, 'build'))) return undefined
  }
  const file = prebuildFile()
  const prebuilt = file && join(root, 'prebuilds', `${process.platform}-${process.arch}`, file)
  return prebuilt && existsSync(prebuilt) ? prebuilt : undefined
}
