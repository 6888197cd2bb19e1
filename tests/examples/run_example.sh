#!/usr/bin/env bash
# run_example.sh PIPEC EXAMPLE.pipe: builds the example as .tar.gz and .zip twice each;
# the two builds must be identical, and the packages must pass the shared validator
# (strict) and inject-check.
set -u
pipec=$1
example=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ext in tar.gz zip; do
  "$pipec" build "$example" -o "$tmp/a.$ext" -q || { echo "FAIL: build .$ext exited $?"; exit 1; }
  sleep 1  # a time stamp in the package would now differ
  "$pipec" build "$example" -o "$tmp/b.$ext" -q || { echo "FAIL: second build .$ext"; exit 1; }
  cmp "$tmp/a.$ext" "$tmp/b.$ext" || { echo "FAIL: two .$ext builds differ"; exit 1; }
done
"$PIPEC_VALIDATE" "$tmp/a.tar.gz" "$tmp/a.zip" || { echo "FAIL: validate"; exit 1; }
"$PIPEC_INJECT_CHECK" "$tmp/a.tar.gz" || { echo "FAIL: inject-check"; exit 1; }
echo "ok: $(basename "$example")"
