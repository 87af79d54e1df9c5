#!/usr/bin/env bash
# Runs node with the sanitizer build of the addon (npm run build:cmake:asan). Node itself is not built with ASan,
# so the ASan runtime must be preloaded, or the addon refuses to load. Usage: scripts/asan-node.sh [node args...]
# Example: scripts/asan-node.sh -e "require('./dist/cjs').cpuUsage()"
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
addon=${BULWARK_NATIVE:-$root/build-cmake-asan/Release/bulwark.node}
if [ ! -f "$addon" ]; then
  echo "asan-node: no sanitizer build at $addon (run: npm run build:cmake:asan)" >&2
  exit 1
fi

# The runtime of the compiler that built the addon (g++ unless CXX says otherwise).
runtime=$("${CXX:-g++}" -print-file-name=libasan.so)
if [ ! -f "$runtime" ]; then
  echo "asan-node: ${CXX:-g++} has no libasan.so" >&2
  exit 1
fi

export BULWARK_NATIVE=$addon
export LD_PRELOAD=$runtime${LD_PRELOAD:+:$LD_PRELOAD}
# Leak checks stay off until node's own allocations at exit are suppressed.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec node "$@"
