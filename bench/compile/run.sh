#!/bin/sh
# Compile benchmark: wall time, steps/s and peak RSS of `pipec build` on synthetic pipelines
# of N container steps (a chain of fan-outs of width 10, see gen_pipeline.py), one core.
# Not a test: it is never registered with ctest, and it exits 1 when a target is missed.
#
# usage: bench/compile/run.sh [BUILD_DIR]
#   PIPEC=/path/to/pipec   use that binary instead of building one
#   SIZES=10,100,...       step counts (default 10,100,1000,5000,10000,50000)
#   REPS=R                 runs per N (default 7 up to 1,000 steps, 5 up to 10,000, 3 above)
#   CPU=0                  the core to pin to (-1: not pinned)
#   TMPDIR=/dev/shm        where sources and outputs go (default /tmp; tmpfs takes fsync out)
#   TARGET=kfp-v2          build the KFP v2 pipeline spec instead of the Argo workflow
#   KEEP=1                 keep the generated .pipe/.yaml/.tar.gz files (printed at the end)
# BUILD_DIR defaults to build-bench; it is configured (RelWithDebInfo, no tests) if new and
# only the pipec target is built.
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
  echo "build: $build ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt"))"
fi
[ -x "$PIPEC" ] || { echo "run.sh: no pipec at $PIPEC" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pipec-compile-bench-XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  trap 'echo "files kept in $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi
trap 'exit 130' INT TERM

cc -O2 -Wall -o "$work/runstat" "$here/runstat.c"

if [ "${TARGET:-kfp-v1}" = kfp-v2 ]; then
  validator=$root/../shared/tools/kfp-v2-validate/validate
else
  validator=$root/../shared/tools/validate-workflow/validate
fi
[ -x "$validator" ] || validator=

echo "machine: $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/measure.py" "$PIPEC" "$work" \
  --sizes "${SIZES:-10,100,1000,5000,10000,50000}" --cpu "${CPU:-0}" --runstat "$work/runstat" --reps "${REPS:-0}" --target "${TARGET:-kfp-v1}" ${validator:+--validate "$validator"}
