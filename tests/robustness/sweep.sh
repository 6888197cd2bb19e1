#!/usr/bin/env bash
# Runs pipec, pipec-kfp (through pipec), pipec-lsp, pipec-launcher and pipec-metrics over
# every hostile input of issue 25 (shared/reference/robustness and what users tried), each
# bounded in time (60 s) and memory (4 GB of address space). Fails on an output holding
# "internal error", a death by signal, or a run that had to be stopped.
#   sweep.sh PIPEC PIPEC_LAUNCHER PIPEC_METRICS
set -u
pipec=$(realpath "$1") launcher=$(realpath "$2") metrics=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
inputs=$here/inputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
failures=0 runs=0

# try NAME STDIN COMMAND...: runs one case and checks it.
try() {
  local name=$1 stdin=$2
  shift 2
  runs=$((runs + 1))
  # The address-space bound is the memory check; a sanitizer build reserves terabytes of
  # shadow memory at start-up, so there (PIPEC_SWEEP_NO_VM_LIMIT) only time bounds a run.
  if [ -n "${PIPEC_SWEEP_NO_VM_LIMIT:-}" ]; then
    (exec timeout -s KILL 60 "$@") <"$stdin" >out.txt 2>err.txt
  else
    (ulimit -v 4000000; exec timeout -s KILL 60 "$@") <"$stdin" >out.txt 2>err.txt
  fi
  local status=$?
  local why=""
  if grep -qi "internal error" out.txt err.txt; then why="an internal error"; fi
  if [ $status -eq 137 ]; then why="killed: still running after 60 s, or out of memory";
  elif [ $status -eq 126 ] || [ $status -eq 127 ]; then why="the binary could not be run";
  elif [ $status -ge 128 ]; then why="signal $((status - 128))"; fi
  if [ -n "$why" ]; then
    failures=$((failures + 1))
    echo "FAIL $name: $why (exit $status)"
    head -c 600 err.txt; echo; head -c 300 out.txt; echo
  else
    echo "ok   $name (exit $status): $(head -n1 err.txt | head -c 160)"
  fi
}

# --- inputs
truncate -s 5G big.pipe
mkdir dir
python3 -c 'import sys; sys.stdout.write("a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join("%s: &%s [%s]\n" % (c, c, ",".join(["*" + chr(ord(c) - 1)] * 9)) for c in "bcdefghi"))' > laughs.yaml
python3 -c 'print("{\"msg\": " + "[" * 100000 + "]" * 100000 + "}")' > deep.json
python3 -c 'print("msg:" + " - " * 50000 + "x")' > deep-block.yaml
python3 -c 'print("[" * 10000 + "]" * 10000)' > deep-argument.json  # an argument is at most 128 KiB
printf 'msg: "ab\377"\n' > not-utf8.yaml
printf '{"msg": "x"},\n' > trailing-comma.json
printf 'msg: [1, 2\n' > broken.yaml
head -c 4096 /dev/urandom > random.bin
cp "$root/tests/client/data/v2-trailing-comma.json" "$root/tests/client/data/broken-no-message.zip" \
   "$root/tests/client/data/annotation-types.yaml" "$root/tests/client/data/kfp-sdk-name-number.yaml" .
pipeline=$root/tests/local/pipeline.pipe
host=http://127.0.0.1:9

# --- the front end: source files and standard input
try "check 5 GiB file" /dev/null "$pipec" check big.pipe
try "check directory" /dev/null "$pipec" check dir
try "check /dev/zero" /dev/null "$pipec" check /dev/zero
for c in check fmt build; do try "$c - < /dev/zero" /dev/zero "$pipec" $c -; done
try "check - < random" random.bin "$pipec" check -
try "fmt random" /dev/null "$pipec" fmt random.bin

# --- parameters, local and remote
for p in dir /dev/zero laughs.yaml deep.json deep-block.yaml not-utf8.yaml trailing-comma.json broken.yaml random.bin; do
  try "run --local --params-file $p" /dev/null "$pipec" run --local "$pipeline" --params-file "$p" --run-dir run
  try "run --params-file $p" /dev/null "$pipec" run "$pipeline" --params-file "$p" --host $host
done
try "run --local -p not UTF-8" /dev/null "$pipec" run --local "$pipeline" -p "msg=ab$(printf '\377')" --run-dir run
try "run -p not UTF-8" /dev/null "$pipec" run "$pipeline" -p "msg=ab$(printf '\377')" --host $host
try "run --local -p name not UTF-8" /dev/null "$pipec" run --local "$pipeline" -p "$(printf '\377')=1" --run-dir run

# --- packages and specs read back
for f in v2-trailing-comma.json broken-no-message.zip annotation-types.yaml kfp-sdk-name-number.yaml \
         laughs.yaml deep.json deep-block.yaml trailing-comma.json random.bin dir /dev/zero; do
  try "upload $f" /dev/null "$pipec" upload "$f" --host $host
  try "run $f" /dev/null "$pipec" run "$f" --host $host
done

# --- the LSP server
try "lsp method not a string" "$inputs/lsp-method-not-string.bin" "$pipec" lsp
for k in method-not-string unreadable-length deep-json; do
  python3 "$root/tests/cli/lsp-gen.py" $k lsp-$k.bin
  try "lsp $k" lsp-$k.bin "$pipec" lsp
done
try "lsp random" random.bin "$pipec" lsp
head -c 20000000 /dev/zero > zeros.bin  # 20 MB of one header line: answered, then read to the end
try "lsp zeros" zeros.bin "$pipec" lsp

# --- the launcher: values, bindings, manifests, kubeconfig
mpi=$(cat "$inputs/mpijob-manifest.json")
tf=$(cat "$inputs/tfjob-manifest.json")
common=(--step-name s --kubeconfig "$tmp/none" --metrics-file m.json --ui-metadata-file u.json)
try "launcher value not UTF-8" /dev/null "$launcher" --manifest "$mpi" \
    --bind /spec/mpiReplicaSpecs/Worker/replicas=workers:int --value "workers=$(printf '\377')" "${common[@]}"
try "launcher string value not UTF-8" /dev/null "$launcher" --manifest "$mpi" \
    --bind "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/image=img:string" \
    --value "img=a$(printf '\377')" "${common[@]}"
try "launcher bind /spec" /dev/null "$launcher" --manifest "$tf" --bind /spec=gpus:quantity --value gpus=500m "${common[@]}"
try "launcher bind empty token" /dev/null "$launcher" --manifest "$mpi" \
    --bind "/spec/mpiReplicaSpecs/Worker/template/spec/containers//image=img:string" --value img=x "${common[@]}"
try "launcher bind not UTF-8" /dev/null "$launcher" --manifest "$mpi" \
    --bind "/spec/mpiReplicaSpecs/Worker/replicas=w$(printf '\377'):int" "${common[@]}"
try "launcher manifest nested deep" /dev/null "$launcher" --manifest "$(cat deep-argument.json)" "${common[@]}"
try "launcher manifest not UTF-8" /dev/null "$launcher" --manifest "{\"kind\": \"$(printf '\377')\"}" "${common[@]}"
for k in dir /dev/zero laughs.yaml deep-block.yaml trailing-comma.json random.bin; do
  try "launcher kubeconfig $k" /dev/null "$launcher" --manifest "$mpi" --step-name s --kubeconfig "$k" \
      --metrics-file m.json --ui-metadata-file u.json --pending-timeout 1s
done

# --- pipec-metrics
python3 "$inputs/long_line_writer.py" > long.log
try "pipec-metrics --from long line" /dev/null "$metrics" --metric loss:min --metrics-file f.json --from long.log -- true
try "pipec-metrics --from /dev/zero" /dev/null "$metrics" --metric loss --metrics-file f.json --from /dev/zero -- true
try "pipec-metrics --from directory" /dev/null "$metrics" --metric loss --metrics-file f.json --from dir -- true
try "pipec-metrics streamed long line" /dev/null "$metrics" --metric loss:min --metrics-file s.json -- \
    python3 "$inputs/long_line_writer.py"

echo "$runs runs, $failures failed"
[ $failures -eq 0 ]
