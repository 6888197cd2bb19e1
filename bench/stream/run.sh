#!/usr/bin/env bash
# The launcher's log path end to end: stream_server (a loopback API serving a big
# timestamped log as the API server's pods/log does) alone to curl, then the real
# pipec-launcher following a PyTorchJob whose master prints that log, its stdout to
# /dev/null. Prints, per run, MB/s of the log request (measured by the server, first byte to
# last) and the client's wall and CPU time.
# usage: bench/stream/run.sh [BUILD_DIR] [MIB]    (RUNS=3 runs of each)
# BEFORE=PATH also runs another pipec-launcher binary (e.g. an older build) in each round.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
mib=${2:-337}
runs=${RUNS:-3}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target stream_server pipec-launcher -j2 >/dev/null
tmp=$(mktemp -d /tmp/pipec-stream-XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
"$build/bench/stream/stream_server" "$tmp/port" "$mib" 2>"$tmp/server.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
cat >"$tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: bench
clusters: [{name: bench, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: bench, user: {token: bench}}]
contexts: [{name: bench, context: {cluster: bench, user: bench, namespace: bench}}]
YAML
manifest='{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"x"},"spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}}}}'
TIMEFORMAT='%R %U %S'
last_log() { tail -n 1 "$tmp/server.log" | sed -n 's/^log: \([0-9]*\) bytes in \([0-9.]*\) s.*/\1 \2/p'; }
report() {  # NAME TIMES
  set -- "$1" $2 $(last_log)
  awk -v name="$1" -v wall="$2" -v user="$3" -v sys="$4" -v bytes="$5" -v secs="$6" 'BEGIN {
    printf "%-9s %8.0f MB/s (server, %d MB in %.3f s)  wall %.3f s  cpu %.3f s (user %.3f, sys %.3f)\n",
      name, bytes / secs / 1e6, bytes / 1e6, secs, wall, user + sys, user, sys }'
}
url="http://127.0.0.1:$port/api/v1/namespaces/bench/pods/bench-master-0/log?timestamps=true&follow=true"
echo "== $mib MiB of timestamped log over loopback, $runs runs each"
for i in $(seq "$runs"); do
  t=$( { time curl -s -o /dev/null "$url" 2>/dev/null; } 2>&1 )
  report curl "$t"
  t=$( { time "$build/runtime/pipec-launcher" --manifest "$manifest" --step-name bench --namespace bench \
           --kubeconfig "$tmp/kubeconfig" --metrics-file "$tmp/metrics.json" >/dev/null 2>"$tmp/launcher.err"; } 2>&1 )
  report launcher "$t"
  grep -q 'job bench succeeded' "$tmp/launcher.err" || { cat "$tmp/launcher.err"; exit 1; }
  if [ -n "${BEFORE:-}" ]; then
    t=$( { time "$BEFORE" --manifest "$manifest" --step-name bench --namespace bench \
             --kubeconfig "$tmp/kubeconfig" --metrics-file "$tmp/metrics.json" >/dev/null 2>"$tmp/launcher.err"; } 2>&1 )
    report before "$t"
  fi
done
