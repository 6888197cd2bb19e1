#!/usr/bin/env bash
# Runs one CLI case against the real pipec binary.
#   run_cli_test.sh PIPEC CASE.test
# A case file holds header lines:
#   # ARGS: <arguments, split by the shell; {TMP} is a fresh temporary directory>
#   # EXIT: <expected exit status>
#   # STDIN: <file to feed on standard input; {TMP} as in ARGS> (optional)
#   # SETUP: <shell command run first, e.g. to generate a program in {TMP}> (optional)
#   # CHECK: <shell command that must succeed afterwards> (optional, repeatable)
# and, beside it, CASE.stdout / CASE.stderr with the exact expected output (absent: not
# compared). The binary runs in the case's directory with NO_COLOR=1, so paths in
# diagnostics are as written. PIPEC_UPDATE_GOLDEN=1 rewrites the expected files.
set -u
pipec=$1
case_file=$2
dir=$(cd "$(dirname "$case_file")" && pwd)
name=$(basename "$case_file" .test)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

header() { sed -n "s/^# $1: \{0,1\}//p" "$case_file"; }
args=$(header ARGS | head -n1)
want_exit=$(header EXIT | head -n1)
stdin_file=$(header STDIN | head -n1)
args=${args//\{TMP\}/$tmp}
stdin_file=${stdin_file//\{TMP\}/$tmp}

cd "$dir"
export PIPEC="$pipec"
setup=$(header SETUP | head -n1)
if [ -n "$setup" ]; then
  setup=${setup//\{TMP\}/$tmp}
  if ! eval "$setup"; then echo "$name: SETUP failed: $setup"; exit 1; fi
fi
eval "set -- $args"
if [ -n "$stdin_file" ]; then
  NO_COLOR=1 "$pipec" "$@" <"$stdin_file" >"$tmp/.stdout" 2>"$tmp/.stderr"
else
  NO_COLOR=1 "$pipec" "$@" </dev/null >"$tmp/.stdout" 2>"$tmp/.stderr"
fi
got_exit=$?
# Temporary paths differ between runs: show them as {TMP}.
sed -i "s#$tmp#{TMP}#g" "$tmp/.stdout" "$tmp/.stderr"

status=0
if [ "${PIPEC_UPDATE_GOLDEN:-}" = 1 ]; then
  for s in stdout stderr; do
    if [ -s "$tmp/.$s" ]; then cp "$tmp/.$s" "$dir/$name.$s"; else rm -f "$dir/$name.$s"; fi
  done
fi
if [ "$got_exit" != "$want_exit" ]; then
  echo "$name: exit status $got_exit, expected $want_exit"
  echo "--- stderr:"; cat "$tmp/.stderr"
  status=1
fi
for s in stdout stderr; do
  if [ -f "$dir/$name.$s" ]; then
    if ! diff -u "$dir/$name.$s" "$tmp/.$s" >"$tmp/.diff"; then
      echo "$name: $s differs from $name.$s:"; cat "$tmp/.diff"; status=1
    fi
  elif [ -s "$tmp/.$s" ] && [ "$s" = stderr ]; then
    echo "$name: unexpected stderr (add $name.stderr):"; cat "$tmp/.$s"; status=1
  fi
done
while IFS= read -r check; do
  [ -n "$check" ] || continue
  check=${check//\{TMP\}/$tmp}
  if ! (eval "$check") >"$tmp/.check.out" 2>&1; then
    echo "$name: check failed: $check"; cat "$tmp/.check.out"; status=1
  fi
done < <(header CHECK)
exit $status
