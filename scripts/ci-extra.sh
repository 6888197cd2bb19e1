#!/usr/bin/env bash
# The checks CI runs after the test suite: the whole suite once more under
# AddressSanitizer + UndefinedBehaviorSanitizer, and every fuzz target (one per input
# surface, tests/fuzz/) for a bounded time each (tests/fuzz/run.sh). Each fails the run on
# any finding. `ci-extra.sh sanitizers` or `ci-extra.sh fuzz` runs one of the two (.ci/run
# times each); no argument runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${PIPEC_FUZZ_SECONDS:-25}  # per target: 11 targets, about 5 minutes

what=${1:-all}

if [ "$what" = all ] || [ "$what" = sanitizers ]; then
  echo "== ASan+UBSan build and tests (build-asan/)"
  if [ ! -f build-asan/CMakeCache.txt ]; then
    cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPIPEC_SANITIZE=ON >/dev/null
  fi
  cmake --build build-asan -j"$(nproc)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -LE nosan
fi

if { [ "$what" = all ] || [ "$what" = fuzz ]; } && [ -x tests/fuzz/run.sh ]; then
  echo "== fuzzing every input surface, ${fuzz_seconds}s per target (build-fuzz/)"
  tests/fuzz/run.sh build-fuzz "$fuzz_seconds"
fi
