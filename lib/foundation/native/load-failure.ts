import { readFileSync } from 'fs'
import { join } from 'path'

import { NativeLoadError } from '../errors/native-load-error'

// Why the addon did not load, and what to do about it (load-native.ts).

function describePlatform(): string {
  const libc = process.platform === 'linux' ? (isMusl() ? 'musl' : 'glibc') : ''
  const napi = process.versions.napi ?? 'unknown'
  return `${process.platform}-${process.arch}${libc ? ` (${libc})` : ''}, Node ${process.version}, N-API ${napi}`
}

function isMusl(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  return !report?.header?.glibcVersionRuntime
}

/** Whether `root` is bulwark's package: when not, its JavaScript runs from elsewhere (a bundle, most often). */
function isOwnPackage(root: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: unknown }).name === 'bulwark'
  } catch {
    return false
  }
}

/**
 * The error thrown when no addon loads: the platform, each path tried, the cause and how to build one. `root` is
 * where the addon was looked for (the package root, as found from the running code).
 */
export function nativeLoadFailure(tried: string[], cause: unknown, root: string): NativeLoadError {
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause)
  const heading = [`bulwark: no usable native addon for ${describePlatform()}.`, `Tried: ${tried.join(', ')}.`]
  const advice = addonsDisabled(cause) ? disabledAdvice() : buildAdvice(root)
  const message = [...heading, `Reason: ${reason}`, ...advice].join('\n')
  return new NativeLoadError(message, describePlatform(), tried, cause)
}

/** Node refused every addon (--no-addons, or the permission model without --allow-addons): nothing to build. */
function addonsDisabled(cause: unknown): boolean {
  return (cause as { code?: unknown } | null)?.code === 'ERR_DLOPEN_DISABLED'
}

function disabledAdvice(): string[] {
  return [
    'Node loads no native addon in this process: it runs with --no-addons, or with the permission model',
    '(--permission) and without --allow-addons. bulwark is a native addon: allow addons to use it.',
  ]
}

function buildAdvice(root: string): string[] {
  return [
    ...(isOwnPackage(root) || process.env.BULWARK_NATIVE
      ? []
      : [
          `bulwark's code runs outside its package (${root} is not bulwark's): a bundler copied the JavaScript, not the addon.`,
          "Keep bulwark out of the bundle (esbuild --external:bulwark, webpack's externals, Vite's ssr.external) and",
          'ship node_modules/bulwark beside it, or ship bulwark/prebuilds/<platform>/*.node and set BULWARK_NATIVE',
          'to its path (docs/guide/install.md, "Bundlers").',
        ]),
    'Prebuilt binaries ship for linux-x64 and linux-arm64 (glibc 2.17+ and musl), darwin-x64, darwin-arm64 and',
    'win32-x64 (docs/guide/install.md).',
    ...(process.platform === 'linux' && isMusl() && !process.env.LIBC
      ? ['On a musl system other than Alpine, set LIBC=musl to load the musl binary.']
      : []),
    'To build from source you need python3, make, a C++17 compiler (g++ or clang++) and Node headers, then run:',
    'npm rebuild bulwark --build-from-source (if npm skips install scripts, first: npm install-scripts approve bulwark).',
    '(From a clone of bulwark: npm run build:native.)',
  ]
}
