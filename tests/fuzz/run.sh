#!/bin/sh
# Builds the fuzz targets with clang in BUILD_DIR and runs each for SECONDS (all of them,
# or the TARGETs named). Fails (non-zero exit) on any crash, leak, sanitizer report,
# timeout or out-of-memory; the input that did it is left in BUILD_DIR/fuzz-findings/.
# Usage: tests/fuzz/run.sh [--all] BUILD_DIR SECONDS [TARGET...]
#   --all        build every target, the tests too, not only the fuzzers: the whole suite can
#                then run from BUILD_DIR under the same sanitizers (scripts/ci-extra.sh does,
#                so that CI compiles the project twice, not three times); SECONDS 0 only builds
#   FUZZ_RUNS=N  stop each target after N runs instead (with SECONDS as a time limit too)
set -eu
build_all=
if [ "${1:-}" = --all ]; then
  build_all=1
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--all] BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
mkdir -p "$1"
build=$(cd "$1" && pwd)  # absolute: the fuzzers run from inside it
seconds=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/fuzz
all="parse_check_fuzzer fmt_fuzzer lsp_fuzzer params_fuzzer kfp_client_fuzzer package_fuzzer
kubeconfig_fuzzer launcher_fuzzer job_render_fuzzer scrape_fuzzer metrics_from_fuzzer"
targets=${*:-$all}
# -O1 with line tables: what sanitizer reports need, at about half the compile time of
# -O2 -g, and the suite runs three to four times faster than at -O0.
flags="-O1 -gline-tables-only -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPIPEC_FUZZ=ON -DPIPEC_SANITIZE=ON \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" ${PIPEC_CMAKE_ARGS:-} >"$build/fuzz-configure.log" 2>&1 ||
  { cat "$build/fuzz-configure.log" >&2; exit 1; }
if [ -n "$build_all" ]; then
  cmake --build "$build" -j"$(nproc)"
else
  # shellcheck disable=SC2086
  cmake --build "$build" --target $targets -j"$(nproc)"
fi
[ "$seconds" = 0 ] && exit 0

# Seeds: seeds/<target>/ for each, and for the front end, fmt and the LSP every example,
# stdlib module and golden case (the LSP's framed as an editor opens them).
seeds_of() {
  dir="$build/fuzz-seeds/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  [ -d "$here/seeds/$1" ] && cp "$here/seeds/$1"/* "$dir/"
  case $1 in
    parse_check_fuzzer|fmt_fuzzer)
      for f in "$root"/dsl-examples/*.pipe "$root"/stdlib/*.pipe "$root"/tests/golden/check/*.pipe \
               "$root"/tests/golden/build/*.pipe; do
        [ -f "$f" ] && cp "$f" "$dir/"
      done ;;
    lsp_fuzzer)
      for f in "$root"/dsl-examples/*.pipe "$root"/tests/golden/build/*.pipe; do
        /usr/bin/python3 "$here/lsp_seed.py" "$f" >"$dir/$(basename "$f").lsp"
      done ;;
    package_fuzzer)
      for f in "$root"/tests/golden/build/*.yaml "$root"/tests/kfpv2/golden/*.yaml "$root"/tests/client/data/*.yaml; do
        [ -f "$f" ] && { printf '\000'; cat "$f"; } >"$dir/$(basename "$f")"
      done ;;
  esac
  echo "$dir"
}
dict_of() {
  case $1 in
    parse_check_fuzzer|fmt_fuzzer) echo "$here/pipe.dict" ;;
    lsp_fuzzer) echo "$here/lsp.dict" ;;
    launcher_fuzzer) echo "$here/launcher.dict" ;;
    job_render_fuzzer) echo "$here/job_render.dict" ;;
    scrape_fuzzer|metrics_from_fuzzer) echo "$here/scrape.dict" ;;
    *) echo "$here/json_yaml.dict" ;;
  esac
}
max_len_of() {
  case $1 in
    parse_check_fuzzer) echo 1048576 ;;  # the front end takes inputs up to 1 MiB
    *) echo 65536 ;;
  esac
}

cd "$build"
mkdir -p fuzz-findings
status=0
for t in $targets; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  seeds=$(seeds_of "$t")
  echo "== $t: ${seconds}s${FUZZ_RUNS:+, at most $FUZZ_RUNS runs}"
  # shellcheck disable=SC2086
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "./tests/fuzz/$t" "$corpus" "$seeds" -dict="$(dict_of "$t")" -max_total_time="$seconds" \
      ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len_of "$t")" \
      -artifact_prefix="$build/fuzz-findings/$t-" -print_final_stats=1 >"$build/fuzz-$t.log" 2>&1; then
    echo "FAIL: $t found something (log: $build/fuzz-$t.log, input in $build/fuzz-findings/)" >&2
    tail -n 60 "$build/fuzz-$t.log" >&2
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^Done|^#[0-9]+ *DONE' "$build/fuzz-$t.log" | tail -n 2 || true
done
exit $status
