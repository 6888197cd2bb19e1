#!/usr/bin/env bash
# Runs the whole test suite (CTest) in build/ (or $PIPEC_BUILD_DIR), after setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PIPEC_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
