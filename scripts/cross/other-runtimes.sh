#!/usr/bin/env bash
# Bun and Deno: runtimes bulwark does not support but must not crash. Their N-API hands out an event loop that is
# not libuv's (Bun's aborts on libuv calls, Deno's lacks them), so the addon leaves it unmeasured there
# (native/binding/environment.cc). Each runtime, from npm and unpacked once into the cache, loads the linux-x64
# prebuild and runs the smoke script (test/smoke/platform-smoke.cjs): every check under Deno; under Bun all but
# sharedRegion, whose worker-thread part Bun fails (docs/readme/install.md, "Bun and Deno").
# Usage: scripts/cross/other-runtimes.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

cache=${BULWARK_NODE_CACHE:-${TMPDIR:-/tmp}/bulwark-node-majors}
mkdir -p "$cache"

# The directory an npm package (name@version) unpacks into, unpacked on first use.
unpacked() {
  local dir=$cache/${1//[@\/]/-}
  if [ ! -d "$dir/package" ]; then
    mkdir -p "$dir"
    local tarball
    tarball=$(cd "$cache" && npm pack "$1" --silent | tail -1)
    tar xzf "$cache/$tarball" -C "$dir"
  fi
  echo "$dir/package"
}

one_thread=loads,bbrLimiter,circuitBreaker,sreBreaker,tokenBucket,heavyKeeper,cpuSignal
bun=$(unpacked @oven/bun-linux-x64@1.4.5)/bin/bun
deno=$(unpacked @deno/linux-x64-glibc@2.9.6)/deno

started=$(date +%s)
PREBUILDS_ONLY=1 BULWARK_SMOKE_ONLY=$one_thread "$bun" test/smoke/platform-smoke.cjs
echo "Bun $("$bun" --version): smoke script in $(($(date +%s) - started)) s"

started=$(date +%s)
PREBUILDS_ONLY=1 "$deno" run --allow-all test/smoke/platform-smoke.cjs
echo "$("$deno" --version | head -1): smoke script in $(($(date +%s) - started)) s"
