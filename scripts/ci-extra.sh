#!/usr/bin/env bash
# The checks CI runs after the test suite: the whole suite once more under
# AddressSanitizer + UndefinedBehaviorSanitizer, and every fuzz target (one per input
# surface, tests/fuzz/) for a bounded time each (tests/fuzz/run.sh). Each fails the run on
# any finding. Both use one build, build-san/ (clang, -O1, ASan+UBSan and libFuzzer's
# coverage instrumentation, configured by tests/fuzz/run.sh): the project is compiled twice
# in CI, not three times. `ci-extra.sh sanitizers` or `ci-extra.sh fuzz` runs one of the two
# (.ci/run times each); no argument runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${PIPEC_FUZZ_SECONDS:-20}  # per target: 11 targets, under 4 minutes

what=${1:-all}

if [ "$what" = all ] || [ "$what" = sanitizers ]; then
  echo "== ASan+UBSan build and tests (build-san/)"
  tests/fuzz/run.sh --all build-san 0
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-san --output-on-failure -j"$(nproc)" -LE nosan
fi

if [ "$what" = all ] || [ "$what" = fuzz ]; then
  echo "== fuzzing every input surface, ${fuzz_seconds}s per target (build-san/)"
  tests/fuzz/run.sh build-san "$fuzz_seconds"
fi
