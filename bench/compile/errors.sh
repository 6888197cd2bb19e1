#!/usr/bin/env bash
# Error reporting must stay linear: N steps, each with an unknown name and an unknown
# `after`, checked by `pipec check` (which stops reporting after 100 errors); then N
# steps each with a syntax error (`stpe`), which the parser reports and skips one by one.
#   PIPEC=build/compiler/driver/pipec bench/compile/errors.sh [N ...]
set -euo pipefail
pipec=${PIPEC:-build/compiler/driver/pipec}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- 20000 200000
for n in "$@"; do
  for m in $n; do
    /usr/bin/python3 - "$m" >"$tmp/p.pipe" <<'PY'
import sys
n = int(sys.argv[1])
print('op e(m: string) {\n  image "b"\n  command ["echo", "${m}"]\n}\npipeline p {')
for i in range(n):
    print(f'  step s{i} = e(m: unknown{i}) after nos{i}')
print('}')
PY
    # pipec check exits 1 (the program has errors): only the figures matter here.
    { /usr/bin/time -f "$m erroneous steps: %e s, peak RSS %M KB" "$pipec" check "$tmp/p.pipe" 2>&1 >/dev/null || true; } | tail -n1
    sed -i 's/^  step /  stpe /' "$tmp/p.pipe"
    { /usr/bin/time -f "$m steps with a syntax error: %e s, peak RSS %M KB" "$pipec" check "$tmp/p.pipe" 2>&1 >/dev/null || true; } | tail -n1
  done
done
