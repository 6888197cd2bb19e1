#!/usr/bin/env bash
# The checks CI runs after the test suite: the whole suite once more under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the parse+check fuzzer for a
# bounded time (tests/fuzz/run.sh). Each fails the run on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${PIPEC_FUZZ_SECONDS:-60}

echo "== ASan+UBSan build and tests (build-asan/)"
if [ ! -f build-asan/CMakeCache.txt ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPIPEC_SANITIZE=ON >/dev/null
fi
cmake --build build-asan -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -LE nosan

if [ -x tests/fuzz/run.sh ]; then
  echo "== fuzzing parse+check for ${fuzz_seconds}s (build-fuzz/)"
  tests/fuzz/run.sh build-fuzz "$fuzz_seconds"
fi
