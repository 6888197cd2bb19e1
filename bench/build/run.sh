#!/usr/bin/env bash
# A clean full build of the project, timed, and the number of its translation units that
# parse <nlohmann/json.hpp> (issue 35; bench/README.md, "Build time").
# Usage: bench/build/run.sh [BUILD_DIR]     (default build-bench-build/)
#   A BUILD_DIR without a CMakeCache.txt is configured as scripts/setup.sh does (Ninja,
#   Release at -O2, and $CMAKE_ARGS: -DPIPEC_UNITY_BUILD=OFF for GCC a file at a time); an
#   existing one keeps its configuration (build/ is RelWithDebInfo).
#   Everything in it is cleaned first and compiled with ccache off (CCACHE_DISABLE=1).
#   JOBS=N  parallel jobs (default 2, the CI machine's cores)
#   TARGETS="T1 T2"  compile only the objects of these targets (and the precompiled header
#                    they use), not link: a sample, for a machine too loaded for a whole build
# Prints the wall time and the CPU time (user + sys of every compiler and linker the build
# ran: the less load-sensitive figure on a shared machine) and the count of
# tests/layers/json_parsers.py: a unit parses the header when the compiler's dependency
# list names it and the unit is compiled without the precompiled header, or builds it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench-build}
jobs=${JOBS:-2}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" ${CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$build" --target clean >/dev/null
export CCACHE_DISABLE=1
times=$(mktemp)
trap 'rm -f "$times"' EXIT
what=()
for t in ${TARGETS:-}; do
  # shellcheck disable=SC2207
  what+=($(sed -n "s/^build \([^ ]*\.o\): CXX_COMPILER__${t}_.*/\1/p" "$build/build.ninja"))
done
[ -z "${TARGETS:-}" ] || [ ${#what[@]} -gt 0 ] || { echo "no objects of $TARGETS" >&2; exit 1; }
/usr/bin/time -f '%e %U %S' -o "$times" ninja -C "$build" -j"$jobs" "${what[@]}" >"$build/bench-build.log" 2>&1 ||
  { tail -n 40 "$build/bench-build.log" >&2; exit 1; }
read -r wall user sys <"$times"
warnings=$(grep -c 'warning:' "$build/bench-build.log" || true)
echo "clean build of $build${TARGETS:+ (the ${#what[@]} objects of $TARGETS)}, -j$jobs," \
  "$(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'wall %.0f s, CPU %.0f s (user %.0f + sys %.0f), %s warnings\n' "$wall" \
  "$(echo "$user + $sys" | bc)" "$user" "$sys" "$warnings"
/usr/bin/python3 "$root/tests/layers/json_parsers.py" "$build" 1000000
