#!/usr/bin/env bash
# run_build_golden.sh PIPEC CASE.pipe: compiles CASE.pipe to YAML twice; both outputs must
# equal CASE.yaml byte for byte, and pass the shared validator (strict) and inject-check.
# inject-check must find nothing; where a case builds a string from a parameter at the
# call site on purpose (Argo joins the parts into one value), the splices it notes are
# listed, reviewed, in CASE.inject and must match exactly. PIPEC_UPDATE_GOLDEN=1 rewrites
# CASE.yaml (never CASE.inject).
set -u
pipec=$1
case_file=$2
expected=${case_file%.pipe}.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$case_file")"
name=$(basename "$case_file")
"$pipec" build "$name" -o "$tmp/first.yaml" -q || { echo "FAIL: pipec build exited $?"; exit 1; }
"$pipec" build "$name" -o "$tmp/second.yaml" -q || { echo "FAIL: second build exited $?"; exit 1; }
cmp "$tmp/first.yaml" "$tmp/second.yaml" || { echo "FAIL: two builds differ"; exit 1; }
if [ "${PIPEC_UPDATE_GOLDEN:-}" = 1 ]; then cp "$tmp/first.yaml" "$expected"; fi
diff -u "$expected" "$tmp/first.yaml" || { echo "FAIL: output differs from $expected"; exit 1; }
"$PIPEC_VALIDATE" "$tmp/first.yaml" || { echo "FAIL: validate"; exit 1; }
inject_expected=${case_file%.pipe}.inject
(cd "$tmp" && "$PIPEC_INJECT_CHECK" first.yaml) >"$tmp/inject.txt" 2>&1
inject_rc=$?
if [ -f "$inject_expected" ]; then
  diff -u "$inject_expected" "$tmp/inject.txt" || { echo "FAIL: inject-check output differs"; exit 1; }
  grep -q '^inject: 0 findings,' "$tmp/inject.txt" || { echo "FAIL: inject-check findings"; exit 1; }
elif [ "$inject_rc" -ne 0 ]; then
  cat "$tmp/inject.txt"; echo "FAIL: inject-check"; exit 1
fi
echo "ok: $name"
