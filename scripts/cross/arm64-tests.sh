#!/usr/bin/env bash
# Part of the unit suite on linux-arm64: arm64 Node under qemu-user loads the arm64 glibc prebuild
# (PREBUILDS_ONLY: never the x64 build/). The files chosen exercise the native code where arm64 differs from x64
# (atomics and memory ordering across threads and processes, hashing, /proc parsing, argument checks) and the
# packed-tarball install; they fit CI's time budget under emulation (about 10x slower than native). Timeouts are
# scaled for emulation; no assertion is. Usage: scripts/cross/arm64-tests.sh [test files...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(
    test/shared/shared-region.test.ts
    test/shared/concurrency.test.ts
    test/shared/rolling-window.test.ts
    test/bbr/bbr-shared.test.ts
    test/hotkeys/heavy-keeper-shared.test.ts
    test/hotkeys/murmur3.test.ts
    test/ratelimit/shared-limiters.test.ts
    test/breakers/shared-breakers.test.ts
    test/native-bad-input.test.ts
    test/cgroup-cpu.test.ts
    test/install/load-error.test.ts
    test/install/prebuilt-install.test.ts
  )
fi

binary=prebuilds/linux-arm64/bulwark.napi.glibc.node
test -f "$binary" || { echo "no $binary: run npm run prebuild:all first" >&2; exit 1; }
node=$(node scripts/cross/emulated-node.js arm64)
started=$(date +%s)
PREBUILDS_ONLY=1 "$node" node_modules/vitest/vitest.mjs run --project unit \
  --testTimeout 180000 --hookTimeout 300000 "${files[@]}"
echo "linux-arm64 under qemu-user: ${#files[@]} test files in $(($(date +%s) - started)) s"
