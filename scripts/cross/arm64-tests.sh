#!/usr/bin/env bash
# Part of the unit suite on linux-arm64: arm64 Node under qemu-user loads the arm64 glibc prebuild
# (PREBUILDS_ONLY: never the x64 build/). The files chosen exercise the native code where arm64 differs from x64:
# shared regions across processes (membership, liveness, reaping), atomics across threads and processes, hashing,
# and the packed-tarball install. They fit CI's time budget under emulation, which runs
# this suite many times slower than native; timeouts are scaled for it (BULWARK_TIME_SCALE for the tests' own), no
# assertion is.
# Usage: scripts/cross/arm64-tests.sh [test files...]   (any unit test file runs; these are the default)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(
    test/shared/shared-region.test.ts
    test/shared/concurrency.test.ts
    test/hotkeys/murmur3.test.ts
    test/install/prebuilt-install.test.ts
  )
fi

binary=prebuilds/linux-arm64/bulwark.napi.glibc.node
test -f "$binary" || { echo "no $binary: run npm run prebuild:all first" >&2; exit 1; }
node=$(node scripts/cross/emulated-node.js arm64)
started=$(date +%s)
PREBUILDS_ONLY=1 BULWARK_TIME_SCALE=6 "$node" node_modules/vitest/vitest.mjs run --project unit \
  --testTimeout 180000 --hookTimeout 300000 "${files[@]}"
echo "linux-arm64 under qemu-user: ${#files[@]} test files in $(($(date +%s) - started)) s"
