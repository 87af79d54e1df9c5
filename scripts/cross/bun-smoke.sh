#!/usr/bin/env bash
# Bun, a runtime bulwark does not support but must not crash: its N-API hands out a libuv loop whose functions abort
# the process, so the addon leaves Bun's loop unmeasured (native/binding/environment.cc). Bun (npm
# @oven/bun-linux-x64, unpacked once into the cache) loads the linux-x64 prebuild and runs the smoke script's
# checks of one thread (test/smoke/platform-smoke.cjs; its sharedRegion check, which holds requests in a worker
# thread, is left out: docs/readme/install.md, "Bun").
# Usage: scripts/cross/bun-smoke.sh [bun version]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

version=${1:-1.4.5}
cache=${BULWARK_NODE_CACHE:-${TMPDIR:-/tmp}/bulwark-node-majors}
dir=$cache/bun-linux-x64-$version
if [ ! -x "$dir/bin/bun" ]; then
  mkdir -p "$dir"
  tarball=$(cd "$cache" && npm pack "@oven/bun-linux-x64@$version" --silent | tail -1)
  tar xzf "$cache/$tarball" -C "$dir" --strip-components=1
fi
started=$(date +%s)
PREBUILDS_ONLY=1 BULWARK_SMOKE_ONLY=loads,bbrLimiter,circuitBreaker,sreBreaker,tokenBucket,heavyKeeper,cpuSignal \
  "$dir/bin/bun" test/smoke/platform-smoke.cjs
echo "Bun $("$dir/bin/bun" --version): smoke script in $(($(date +%s) - started)) s"
