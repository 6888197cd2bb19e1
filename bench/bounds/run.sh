#!/usr/bin/env bash
# The worst cases of issue 42's bounds (points 11-13), each timed once with /usr/bin/time -v:
# wall time and peak RSS. usage: bench/bounds/run.sh [BUILD_DIR] (default build/)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pipec=${PIPEC:-$(cd "${1:-$here/../../build}" && pwd)/compiler/driver/pipec}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() {  # NAME COMMAND...
  local name=$1; shift
  /usr/bin/time -v "$@" >/dev/null 2>"$tmp/time" || true
  printf '%-44s %8s s %8s KiB\n' "$name" \
    "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")" \
    "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")"
}
python3 "$here/gen_bounds.py" calls 16 "$tmp/calls"
python3 "$here/gen_bounds.py" graph 18 "$tmp/graph"
python3 "$here/gen_bounds.py" graph 16 "$tmp/graph16"
python3 "$here/gen_bounds.py" inputs 14000 "$tmp/inputs"
python3 "$here/gen_bounds.py" inputs 90000 "$tmp/inputs4m"
measure "graph: calls 16 deep (196,606 nodes), svg" "$pipec" graph "$tmp/calls/calls.pipe" --format svg -o "$tmp/c.svg"
export PIPEC_COMPONENT_CACHE=$tmp/graph/cache
measure "check: graph components 18 deep, 2 tasks" "$pipec" check "$tmp/graph/graph.pipe"
export PIPEC_COMPONENT_CACHE=$tmp/graph16/cache
measure "graph: graph components 16 deep (refused)" "$pipec" graph "$tmp/graph16/graph.pipe" --format svg -o "$tmp/g.svg"
measure "check: 14,000 inputs named alike" "$pipec" check "$tmp/inputs/inputs.pipe"
measure "component show: 90,000 inputs (3.9 MiB, refused)" "$pipec" component show "$tmp/inputs4m/inputs.yaml"
measure "check: 90,000 inputs (3.9 MiB, refused)" "$pipec" check "$tmp/inputs4m/inputs.pipe"
