#!/usr/bin/env bash
# The C++ core harnesses (native/test, no Node) built statically against musl with Zig and run on this machine:
# the core's behaviour on the C library Alpine uses. No sanitizers (Zig has no musl ASan runtime).
# Usage: scripts/cross/musl-native-tests.sh [build dir, default build-native-tests-musl]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
zig=$(node -e "process.stdout.write(require('$root/scripts/prebuild/toolchains.js').zig())")
arch=$(uname -m)
export CXX="$zig c++ -target $arch-linux-musl"
export NATIVE_TESTS_FLAGS="-O2 -g"
export NATIVE_TESTS_LDFLAGS="-static"
"$root/scripts/native-tests.sh" "${1:-$root/build-native-tests-musl}"
for harness in "${1:-$root/build-native-tests-musl}"/*_test; do
  # A static musl executable has no interpreter: prove it is one, not a glibc build that happens to run.
  if readelf -l "$harness" | grep -q 'Requesting program interpreter'; then
    echo "FAILED: $harness is dynamically linked" >&2
    exit 1
  fi
done
