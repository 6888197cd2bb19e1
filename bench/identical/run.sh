#!/usr/bin/env bash
# Every output of two pipec binaries, compared byte for byte over every .pipe of the
# repository (issue 35 pt 9: a restructuring changes no output). For each file: `check`
# (text and JSON diagnostics), `build` for kfp-v1 (.yaml and .tar.gz), kfp-v2, the
# WorkflowTemplate and CronWorkflow kinds, each kind also with --training-runtime
# trainer-v2,pods, and `graph` (dot, json); stdout, stderr, the exit status and the file
# written must all be equal. Paths in messages are the same for both: each runs in the
# same folder with the same relative path.
#
#   bench/identical/run.sh OLD_PIPEC NEW_PIPEC [FILE.pipe ...]
#
# Prints one line per difference and a count; exit 1 when anything differs.
set -uo pipefail
old=$(realpath "$1") new=$(realpath "$2")
shift 2
cd "$(dirname "$0")/../.."
if (($#)); then files=("$@"); else mapfile -t files < <(git ls-files '*.pipe'); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

runs=0 differ=0
compare() {  # compare NAME ARGS... (OUT is the file the command writes, if any)
  local name=$1
  shift
  local side
  for side in old new; do
    local bin=${!side}
    rm -f "$work/out.$side"*
    (OUT=$work/out.$side; eval "\"$bin\" $*" >"$work/$side.stdout" 2>"$work/$side.stderr"; echo $? >"$work/$side.rc")
    sed -i "s#$work/out.$side#OUT#g" "$work/$side.stdout" "$work/$side.stderr"
  done
  runs=$((runs + 1))
  local what
  for what in stdout stderr rc; do
    if ! cmp -s "$work/old.$what" "$work/new.$what"; then
      echo "differs: $name: $what"
      differ=$((differ + 1))
      return
    fi
  done
  local f
  for f in "$work"/out.old*; do
    [[ -e $f ]] || continue
    if ! cmp -s "$f" "${f/out.old/out.new}"; then
      echo "differs: $name: the file written"
      differ=$((differ + 1))
      return
    fi
  done
}

for f in "${files[@]}"; do
  q=$(printf %q "$f")
  compare "$f check" check "$q"
  compare "$f check json" check --diagnostics json "$q"
  for rt in "" "--training-runtime trainer-v2,pods"; do
    compare "$f build $rt" build -q $rt "$q" -o '"$OUT.yaml"'
    compare "$f build tgz $rt" build -q $rt "$q" -o '"$OUT.tar.gz"'
    compare "$f build kfp-v2 $rt" build -q --target kfp-v2 $rt "$q" -o '"$OUT.yaml"'
  done
  compare "$f build template" build -q --kind workflow-template "$q" -o '"$OUT.yaml"'
  compare "$f build cron" build -q --kind cron-workflow --cron "'0 2 * * *'" "$q" -o '"$OUT.yaml"'
  compare "$f graph" graph "$q"
  compare "$f graph json" graph --format json "$q"
done
echo "$runs runs over ${#files[@]} files, $differ differ"
((differ == 0))
