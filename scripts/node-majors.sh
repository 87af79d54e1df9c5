#!/usr/bin/env bash
# npm test under each Node major the package runs on (default: 20 22 24 26; 22, 24 and 26 are supported, 20 is past
# its end of life and kept while it works), one after the other, then a table of the exact version, the tests passed
# and the duration of each. A major other than the system Node's comes from the npm registry (node-linux-<arch>@<major>
# holds bin/node), unpacked once into a cache directory. The addon is built once: it is Node-API, so the one binary
# loads in every major.
#   scripts/node-majors.sh [major ...]
# Exits non-zero when any major fails. BULWARK_NODE_CACHE: where the Node binaries go (default: $TMPDIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(20 22 24 26)
cache=${BULWARK_NODE_CACHE:-${TMPDIR:-/tmp}/bulwark-node-majors}
mkdir -p "$cache"
arch=$(node -p process.arch)
system_major=$(node -p 'process.versions.node.split(".")[0]')

# The bin/ directory of a Node of that major: the system's own, or one from npm.
node_bin() {
  local major=$1
  if [ "$major" = "$system_major" ]; then
    dirname "$(command -v node)"
    return
  fi
  local tarball
  tarball=$(cd "$cache" && npm pack "node-linux-$arch@$major" --silent | tail -1)
  local dir=$cache/${tarball%.tgz}
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$dir"
    tar xzf "$cache/$tarball" -C "$dir" --strip-components=1
  fi
  echo "$dir/bin"
}

rows=()
failed=0
for major in "${majors[@]}"; do
  bin=$(node_bin "$major")
  version=$("$bin/node" --version)
  report=$cache/vitest-$major.json
  rm -f "$report"
  printf '\n=== npm test on Node %s (%s)\n' "$version" "$bin/node"
  start=$SECONDS
  status=0
  PATH="$bin:$PATH" npm test -- --reporter=default --reporter=json --outputFile.json="$report" || status=$?
  seconds=$((SECONDS - start))
  # The counts come from vitest's JSON report (no report: the run did not get as far as the tests).
  counts=$(node -e '
    const fs = require("fs")
    const file = process.argv[1]
    const r = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : undefined
    const skipped = r && r.numPendingTests + r.numTodoTests
    console.log(r ? `${r.numPassedTests} of ${r.numTotalTests} passed, ${r.numFailedTests} failed, ${skipped} skipped` : "no report")
  ' "$report")
  [ "$status" -eq 0 ] || failed=1
  rows+=("$(printf '| %s | %s | %s | %dm%02ds |' "$version" "$([ "$status" -eq 0 ] && echo ok || echo FAILED)" "$counts" $((seconds / 60)) $((seconds % 60)))")
done

printf '\n| Node | result | tests | duration |\n| --- | --- | --- | --- |\n'
printf '%s\n' "${rows[@]}"
exit "$failed"
