#!/usr/bin/python3
"""pipec-metrics, the real binary (runtime/metrics_main.cpp): a container op's command runs
under it with its output passed through unchanged, its metrics written as KFP's file, its
exit status kept, SIGTERM passed on; --install copies it; bad specs are exit 2.

usage: pipec_metrics_test.py PIPEC_METRICS WORKDIR
"""
import json
import os
import signal
import subprocess
import sys
import time

TOOL, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args, **kw):
    return subprocess.run([TOOL, *args], capture_output=True, timeout=30, **kw)


out = os.path.join(WORK, "m", "metrics.json")
script = ("import sys\nprint('epoch 1 acc=0.5 loss: 2.0')\nprint('acc=0.75', file=sys.stderr)\n"
          "print('arg=' + sys.argv[1])\nsys.exit(3)\n")
hostile = "it's \"$(id)\" `x` {{workflow.name}}"
p = run("--metric", "acc:PERCENTAGE", "--metric", "loss:min", "--metrics-file", out, "--",
        "/usr/bin/python3", "-c", script, hostile)
check(p.returncode == 3, f"exit status kept: {p.returncode}")
check(p.stdout.decode() == f"epoch 1 acc=0.5 loss: 2.0\nacc=0.75\narg={hostile}\n",
      "output passed through, stderr merged in order: " + repr(p.stdout))
doc = json.load(open(out))
check(doc == {"metrics": [{"format": "PERCENTAGE", "name": "acc", "numberValue": 0.75},
                          {"format": "RAW", "name": "loss", "numberValue": 2.0}]}, f"metrics {doc}")

# --from: the metrics come from the file, not the output.
mfile = os.path.join(WORK, "from.txt")
p = run("--metric", "rmse", "--metrics-file", out, "--from", mfile, "--",
        "sh", "-c", 'echo rmse=9; echo "rmse=0.25" > "$0"', mfile)
check(p.returncode == 0, "from: exit")
check(json.load(open(out))["metrics"] == [{"format": "RAW", "name": "rmse", "numberValue": 0.25}],
      "from: " + open(out).read())

# A progress bar redrawn with '\r' only, written in 64 KiB pieces: one "line" of 1.1 MiB
# whose `loss=12.5` comes just after the old 1 MiB cut. Streamed and --from give the same
# value, the whole one (issue 25, F-A1: 1.0 streamed, 12.5 with --from).
writer = ("import sys, time\n"
          "bar = b' 41%|####      | 41/100 [00:04<00:05, it/s=9.8]\\r'\n"
          "cut = 17 * 65536\n"
          "pad = (bar * (cut // len(bar) + 1))[:cut - 7]\n"
          "data = pad + b' loss=12.5 done\\r\\n'\n"
          "for i in range(0, len(data), 65536):\n"
          "    sys.stdout.buffer.write(data[i:i + 65536]); sys.stdout.buffer.flush(); time.sleep(0.02)\n")
streamed = run("--metric", "loss:min", "--metrics-file", out, "--", "/usr/bin/python3", "-c", writer)
check(streamed.returncode == 0, f"long line streamed: exit {streamed.returncode}")
check(json.load(open(out))["metrics"] == [{"format": "RAW", "name": "loss", "numberValue": 12.5}],
      "long line streamed: " + open(out).read())
logfile = os.path.join(WORK, "long.log")
with open(logfile, "wb") as f:
    f.write(streamed.stdout)
p = run("--metric", "loss:min", "--metrics-file", out, "--from", logfile, "--", "true")
check(json.load(open(out))["metrics"] == [{"format": "RAW", "name": "loss", "numberValue": 12.5}],
      "long line --from: " + open(out).read())
# --from a directory or a device: said, no metrics, no hang.
p = run("--metric", "loss", "--metrics-file", out, "--from", "/dev/zero", "--", "true")
check(p.returncode == 0 and b"not a regular file" in p.stderr, f"--from /dev/zero: {p.stderr!r}")

# SIGTERM reaches the command, which may still print its last metrics.
proc = subprocess.Popen([TOOL, "--metric", "acc", "--metrics-file", out, "--", "sh", "-c",
                         "trap 'echo acc=0.5; exit 7' TERM; echo started; while :; do sleep 0.1; done"],
                        stdout=subprocess.PIPE)
check(proc.stdout.readline() == b"started\n", "started")
time.sleep(0.3)
proc.send_signal(signal.SIGTERM)
rest = proc.communicate(timeout=10)[0]
check(proc.returncode == 7, f"SIGTERM passed on: exit {proc.returncode}")
check(json.load(open(out))["metrics"] == [{"format": "RAW", "name": "acc", "numberValue": 0.5}],
      "metrics after SIGTERM: " + open(out).read() + repr(rest))

# Bad specs and usage: exit 2 before anything runs.
marker = os.path.join(WORK, "ran")
for args in (["--metric", "a=b", "--", "touch", marker], ["--metric", "x", "--metric", "x", "--", "touch", marker],
             ["--metric", "x"], ["--bogus"]):
    p = run(*args)
    check(p.returncode == 2 and p.stderr.startswith(b"pipec-metrics: "), f"{args}: exit {p.returncode} {p.stderr!r}")
check(not os.path.exists(marker), "a bad spec ran the command")
p = run("--metric", "x", "--metrics-file", out, "--", os.path.join(WORK, "no-such-program"))
check(p.returncode == 127, f"a command that cannot start: {p.returncode}")

# --executor-input (KFP v2's {{$}}): the metrics as the metadata of the output artifact
# `metrics` in the ExecutorOutput file it names.
exec_out = os.path.join(WORK, "executor-output.json")
executor_input = {"outputs": {"artifacts": {"metrics": {"artifacts": [
    {"name": "metrics", "type": {"schemaTitle": "system.Metrics"}, "uri": "minio://b/m"}]}},
    "outputFile": exec_out}}
p = run("--metric", "acc", "--metrics-file", out, "--executor-input", json.dumps(executor_input), "--",
        "echo", "acc=0.5")
check(p.returncode == 0, f"executor input: exit {p.returncode} {p.stderr!r}")
eo = json.load(open(exec_out)) if os.path.exists(exec_out) else {}
check(eo.get("artifacts", {}).get("metrics", {}).get("artifacts", [{}])[0].get("metadata") == {"acc": 0.5},
      f"executor output {eo}")
check(run("--metric", "acc", "--executor-input", "[1]", "--", "echo").returncode == 2, "bad executor input")

# --series-file (the kfp-v2 target passes the path of the output artifact `metric_series`):
# the series goes there, not beside the metrics file; without it, beside the metrics file.
series = os.path.join(WORK, "v2", "artifacts", "metric_series")
beside = os.path.join(os.path.dirname(out), "metric-series.json")
if os.path.exists(beside):
    os.remove(beside)
p = run("--metric", "acc", "--metrics-file", out, "--series-file", series, "--executor-input",
        json.dumps(executor_input), "--", "sh", "-c", "echo step=1 acc=0.5; echo step=2 acc=0.75")
check(p.returncode == 0, f"--series-file: exit {p.returncode} {p.stderr!r}")
doc = json.load(open(series)) if os.path.exists(series) else {}
check(doc.get("format") == "pipec-metric-series/1" and
      doc.get("metrics", [{}])[0].get("points") == [{"order": 0, "step": 1, "value": 0.5},
                                                    {"order": 1, "step": 2, "value": 0.75}],
      f"--series-file: {doc}")
check(not os.path.exists(beside), "--series-file: a series was written beside the metrics file too")
p = run("--metric", "acc", "--metrics-file", out, "--", "echo", "acc=0.5")
check(os.path.exists(beside), "no --series-file: no metric-series.json beside the metrics file")

# --install: a working copy (what the init container does).
copy = os.path.join(WORK, "bin", "pipec-metrics")
os.makedirs(os.path.dirname(copy), exist_ok=True)
check(run("--install", copy).returncode == 0 and os.access(copy, os.X_OK), "install")
p = subprocess.run([copy, "--metric", "x", "--metrics-file", out, "--", "echo", "x=1"], capture_output=True)
check(p.returncode == 0 and json.load(open(out))["metrics"][0]["numberValue"] == 1.0, "installed copy runs")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
