#!/bin/sh
# Builds scrape_bench and measures, on one core, MB/s and peak RSS of:
#  1. the metric scraper alone, on a 1 GiB synthetic training log (half its lines hold
#     metrics, 10 metric names);
#  2. the launcher's whole log path (LogCopier: kubelet timestamps, log cursor, copy to
#     stdout, metric scan) on 1 GiB logs with kubelet timestamps, one with 10 % and one
#     with 50 % metric lines, the copy going to /dev/null.
# Each log is generated in /tmp and deleted afterwards.
# usage: bench/scrape/run.sh [BUILD_DIR] [MIB]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
mib=${2:-1024}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target scrape_bench -j2 >/dev/null
bench=$build/bench/scrape/scrape_bench
log=$(mktemp /tmp/pipec-scrape-XXXXXX.log)
trap 'rm -f "$log"' EXIT INT TERM
one_core() {  # pinned to core 0 where taskset works
  if taskset -c 0 true 2>/dev/null; then taskset -c 0 "$@"; else "$@"; fi
}

"$bench" generate "$log" "$mib"
cat "$log" >/dev/null  # warm the page cache so the figure is the scraper's, not the disk's
echo "== scraper: $mib MiB, 50 % metric lines, 10 metric names"
one_core "$bench" scan "$log"
for pct in 10 50; do
  "$bench" generate "$log" "$mib" "$pct" kubelet
  cat "$log" >/dev/null
  echo "== stream (timestamps, cursor, stdout, scan): $mib MiB, $pct % metric lines"
  { one_core "$bench" stream "$log" 2>&1 >/dev/null; } | grep -v '^metrics'
done
