#!/bin/sh
# Builds the front-end fuzzer with clang in BUILD_DIR and runs it for SECONDS.
# Fails (non-zero exit) on any crash, leak, sanitizer report or timeout.
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
mkdir -p "$1"
build=$(cd "$1" && pwd)  # absolute: the fuzzer runs from inside it
seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPIPEC_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="$sanitize" >"$build/fuzz-configure.log" 2>&1 ||
  { cat "$build/fuzz-configure.log" >&2; exit 1; }
cmake --build "$build" --target parse_check_fuzzer -j2

# Seeds: every example, stdlib module and golden case. New inputs go to corpus/.
seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
mkdir -p "$seeds" "$corpus"
for f in "$root"/dsl-examples/*.pipe "$root"/stdlib/*.pipe "$root"/tests/golden/check/*.pipe "$root"/tests/golden/build/*.pipe; do
  [ -f "$f" ] && cp "$f" "$seeds/"
done

cd "$build"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ./tests/fuzz/parse_check_fuzzer "$corpus" "$seeds" \
  -dict="$root/tests/fuzz/pipe.dict" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
