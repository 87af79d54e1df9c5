#!/usr/bin/env bash
# Builds every C++ harness in native/test/ with AddressSanitizer and UndefinedBehaviorSanitizer against the core
# sources (native/core: no Node headers) and runs it. Any sanitizer report, failed check or crash exits non-zero.
# Usage: scripts/native-tests.sh [build dir, default build-native-tests]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build-native-tests}
cxx=${CXX:-g++}
flags=(-std=c++17 -fno-exceptions -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
  -fno-sanitize-recover=undefined -Wall -Wextra -Wno-unused-parameter -I"$root/native")
mkdir -p "$out"

# Leaks are checked here (no Node around): the harnesses must free what they allocate.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Arguments some harnesses need (fixture directories, rounds).
args_for() {
  case "$1" in
    cgroup_cpu_test) echo "$root/test/fixtures/cgroup 200" ;;
    shared_region_test) echo "2000" ;;
    *) echo "" ;;
  esac
}

objects=()
for rel in $(node "$root/scripts/native-sources.js" --dir native/core); do
  source="$root/$rel"
  object="$out/${rel#native/}"
  object="${object%.cc}.o"
  mkdir -p "$(dirname "$object")"
  if [ ! -f "$object" ] || [ "$source" -nt "$object" ] || [ -n "$(find "$root/native/core" -name '*.h' -newer "$object")" ]; then
    "$cxx" "${flags[@]}" -c "$source" -o "$object"
  fi
  objects+=("$object")
done

failed=0
for harness in "$root"/native/test/*_test.cc; do
  name=$(basename "${harness%.cc}")
  echo "=== $name"
  "$cxx" "${flags[@]}" "$harness" "${objects[@]}" -o "$out/$name" -lpthread -lrt
  # shellcheck disable=SC2046
  if ! "$out/$name" $(args_for "$name"); then
    echo "FAILED: $name" >&2
    failed=1
  fi
done
exit $failed
