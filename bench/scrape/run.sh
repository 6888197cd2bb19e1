#!/bin/sh
# Builds scrape_bench, generates a 1 GiB synthetic training log with 10 metric names in /tmp,
# scrapes it on one core and reports MB/s and peak RSS. The log is deleted afterwards.
# usage: bench/scrape/run.sh [BUILD_DIR] [MIB]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
mib=${2:-1024}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target scrape_bench -j2 >/dev/null
log=$(mktemp /tmp/pipec-scrape-XXXXXX.log)
trap 'rm -f "$log"' EXIT INT TERM
"$build/bench/scrape/scrape_bench" generate "$log" "$mib"
cat "$log" >/dev/null  # warm the page cache so the figure is the scraper's, not the disk's
echo "log: $mib MiB, 10 metric names"
taskset -c 0 "$build/bench/scrape/scrape_bench" scan "$log" 2>/dev/null ||
  "$build/bench/scrape/scrape_bench" scan "$log"
