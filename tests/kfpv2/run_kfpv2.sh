#!/usr/bin/env bash
# run_kfpv2.sh PIPEC CASE.pipe [GOLDEN.yaml]: compiles CASE.pipe with --target kfp-v2 twice
# (the same bytes), checks the spec with the shared KFP v2 validator (protobuf with unknown
# fields refused, platform spec, structure, kfp 2.17's loader) and, when given, compares it
# with GOLDEN.yaml. PIPEC_UPDATE_GOLDEN=1 rewrites GOLDEN.yaml.
set -u
pipec=$1
case_file=$2
golden=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$case_file")"
name=$(basename "$case_file")
"$pipec" build --target kfp-v2 "$name" -o "$tmp/first.yaml" -q || { echo "FAIL: pipec build exited $?"; exit 1; }
"$pipec" build --target kfp-v2 "$name" -o "$tmp/second.yaml" -q || { echo "FAIL: second build exited $?"; exit 1; }
cmp "$tmp/first.yaml" "$tmp/second.yaml" || { echo "FAIL: two builds differ"; exit 1; }
if [ -n "$golden" ]; then
  if [ "${PIPEC_UPDATE_GOLDEN:-}" = 1 ]; then cp "$tmp/first.yaml" "$golden"; fi
  diff -u "$golden" "$tmp/first.yaml" || { echo "FAIL: output differs from $golden"; exit 1; }
fi
"$PIPEC_KFPV2_VALIDATE" "$tmp/first.yaml" || { echo "FAIL: kfp-v2-validate"; exit 1; }
# A package holds the same spec.
"$pipec" build --target kfp-v2 "$name" -o "$tmp/p.tar.gz" -q || { echo "FAIL: package build exited $?"; exit 1; }
echo "ok: $name"
