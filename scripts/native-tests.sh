#!/usr/bin/env bash
# Builds every C++ harness in native/test/ with AddressSanitizer and UndefinedBehaviorSanitizer against the core
# sources (native/core: no Node headers) and runs it. Any sanitizer report, failed check or crash exits non-zero.
# Usage: scripts/native-tests.sh [build dir, default build-native-tests]
# CXX may carry arguments (`zig c++ -target x86_64-linux-musl`); NATIVE_TESTS_FLAGS replaces the sanitizer flags
# and NATIVE_TESTS_LDFLAGS adds link flags (scripts/cross/musl-native-tests.sh builds static musl harnesses so).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build-native-tests}
read -r -a cxx <<<"${CXX:-g++}"
read -r -a variant <<<"${NATIVE_TESTS_FLAGS:--g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined}"
read -r -a ldflags <<<"${NATIVE_TESTS_LDFLAGS:-}"
flags=(-std=c++17 -fno-exceptions "${variant[@]}" -Wall -Wextra -Wno-unused-parameter -I"$root/native")
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
    "${cxx[@]}" "${flags[@]}" -c "$source" -o "$object"
  fi
  objects+=("$object")
done

failed=0
for harness in "$root"/native/test/*_test.cc; do
  name=$(basename "${harness%.cc}")
  echo "=== $name"
  "${cxx[@]}" "${flags[@]}" "$harness" "${objects[@]}" -o "$out/$name" "${ldflags[@]}" -lpthread -lrt
  # shellcheck disable=SC2046
  if ! "$out/$name" $(args_for "$name"); then
    echo "FAILED: $name" >&2
    failed=1
  fi
done
exit $failed
