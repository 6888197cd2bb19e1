#!/bin/sh
# Scale figures of issue 25 (not a test; never registered with ctest): wall time, steps/s
# and peak RSS (/usr/bin/time -v) of
#   * `pipec build --target kfp-v2` on synthetic pipelines of 1,000, 10,000 and 100,000
#     steps (bench/compile/gen_pipeline.py; the Argo target beside it for comparison);
#   * `pipec lsp` answering one hover at the end of a line of 10,000 and 160,000
#     characters (the session of shared/reference/robustness/F-E2-lsp-long-line.py:
#     initialize, open, hover, shutdown, exit), UTF-16 positions (the protocol's default).
#
# usage: bench/scale/run.sh [BUILD_DIR]     (default build-bench, as bench/compile/run.sh)
#   PIPEC=/path/to/pipec   use that binary instead of building one
#   SIZES=1000,10000       step counts (default 1000,10000,100000)
#   LINES=10000,160000     line lengths for the LSP (default 10000,160000)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -z "${PIPEC:-}" ]; then
  build=${1:-$root/build-bench}
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIPEC_TESTS=OFF >/dev/null
  fi
  cmake --build "$build" --target pipec -j2 >/dev/null
  PIPEC=$build/compiler/driver/pipec
fi
[ -x "$PIPEC" ] || { echo "run.sh: no pipec at $PIPEC" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time (Debian: apt-get install time)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pipec-scale-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# One measured command: prints wall seconds, user+sys seconds and peak RSS in MiB.
measure() {
  /usr/bin/time -v "$@" >"$work/out" 2>"$work/time" </dev/null || {
    echo "run.sh: failed: $*" >&2; tail -n 30 "$work/time" >&2; exit 1; }
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$work/time")
}

printf '%-8s %9s %9s %9s %12s %10s\n' target steps wall_s cpu_s steps_per_s rss_MiB
for n in $(echo "${SIZES:-1000,10000,100000}" | tr ',' ' '); do
  python3 "$root/bench/compile/gen_pipeline.py" "$n" "$work/gen_$n.pipe"
  for target in kfp-v2 kfp-v1; do
    measure "$PIPEC" build "$work/gen_$n.pipe" --target "$target" -o "$work/gen_$n.yaml" -q --allow-oversize
    printf '%-8s %9s %9s %9s %12s %10s\n' "$target" "$n" "$wall" "$cpu" \
      "$(awk -v n="$n" -v t="$cpu" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')" "$rss"
  done
done

echo
printf '%-14s %9s %9s %10s\n' 'lsp line' wall_s cpu_s rss_MiB
for n in $(echo "${LINES:-10000,160000}" | tr ',' ' '); do
  python3 - "$n" "$work/lsp_$n.bin" <<'PY'
import json, sys
n = int(sys.argv[1])
text = 'pipeline p { param x: string = "' + "a" * n + '" }\n'
uri = "file:///tmp/long.pipe"
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
         "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": n + 40}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
with open(sys.argv[2], "wb") as f:
    for m in msgs:
        b = json.dumps(m).encode()
        f.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
PY
  /usr/bin/time -v "$PIPEC" lsp <"$work/lsp_$n.bin" >"$work/out" 2>"$work/time" || {
    echo "run.sh: pipec lsp failed on a line of $n" >&2; tail -n 30 "$work/time" >&2; exit 1; }
  grep -q '"id":2' "$work/out" || { echo "run.sh: no hover answer for a line of $n" >&2; exit 1; }
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$work/time")
  printf '%-14s %9s %9s %10s\n' "$n chars" "$wall" "$cpu" "$rss"
done
