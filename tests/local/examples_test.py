#!/usr/bin/python3
"""Every dsl-examples/*.pipe under `pipec run --local` (tests/local/CMakeLists.txt).

usage: examples_test.py PIPEC WORKDIR EXAMPLE.pipe
The expectation of each example is written here with its reason; a new example must be
added. Steps that fetch use a file:// URL (curl reads it without a network).
"""
import json
import os
import subprocess
import sys

PIPEC, WORK, EXAMPLE = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
NAME = os.path.basename(EXAMPLE)[:-5]
# The example itself: its directory stays visible in the sandbox even under /tmp.
URL = ["-p", "url=file://" + os.path.abspath(EXAMPLE)]

# name -> (arguments, exit status, the outcomes of some steps or a text of the output)
EXPECT = {
    # Runs: fetch reads a local file, every condition and the finally are evaluated.
    "conditions": (URL, 0, {"fetch": "succeeded", "announce_quick": "succeeded", "announce_full": "skipped"}),
    "exit_handler": (URL, 0, {"done": "succeeded", "cleanup": "succeeded", "notify": "succeeded"}),
    # Runs; its fetches need https://example.com (CI has no network, where curl could wait
    # minutes), so the list parameter is empty: no fetch_shard, and the withItems loop runs.
    "loops": (["-p", "shards=[]"], 0, {"start": "succeeded", "announce.0": "succeeded",
                                        "announce.1": "succeeded", "fetch_shard.0": None}),
    # Runs: make's `file` output is copied into count's container, as an artifact is on a
    # cluster; report reads both steps' values.
    "outputs": (["-p", "lines=50"], 0, {"make": "succeeded", "count": "succeeded", "report": "succeeded"},
                "50 rows written, 50 lines read"),
    # Run; their commands need programs only their images have (python -m trainer,
    # train.py): images are not pulled, so the step fails with the shell's message.
    # Runs: the run's workspace is RUN_DIR/workspace, mounted by both container steps and the
    # MPI job's launcher (mpirun starts the ranks locally); summarize reads what both wrote.
    "workspace": ([], 0, {"prepare": "succeeded", "train": "succeeded", "summarize": "succeeded"},
                  "rank 1 read 100 rows"),
    "container_op": ([], 1, {"train": "failed", "publish": "not run"},
                     "'python' is not installed on this host (it would come from the image python:3.11-slim"),
    "constraints": ([], 1, {"train": "failed"}),
    # Need PersistentVolumeClaims (`data`) or git-sync (`sync_source`): a located error,
    # nothing runs.
    "helm_tf_training": ([], 2, "helm_tf_training.pipe:28:11: error: step 'train' cannot run locally: 'data'"),
    "mnist_tf": ([], 2, "mnist_tf.pipe:21:11: error: step 'train' cannot run locally: 'data'"),
    "mpi_run": ([], 2, "mpi_run.pipe:22:11: error: step 'all_reduce' cannot run locally: 'data'"),
    "mpi_trainer_v2": ([], 2, "mpi_trainer_v2.pipe:25:11: error: step 'all_reduce' cannot run locally: 'data'"),
    "ps_worker_tf": ([], 2, "ps_worker_tf.pipe:37:13: error: step 'train' cannot run locally: 'data'"),
    "pytorch_ddp": ([], 2, "pytorch_ddp.pipe:21:18: error: step 'train' cannot run locally: 'sync_source'"),
    "pytorch_trainer_v2": ([], 2, "pytorch_trainer_v2.pipe:26:11: error: step 'train' cannot run locally: 'data'"),
    # A TrainJob on a Trainer runtime by name: the runtime is the cluster's.
    "trainer_runtimes": ([], 2, "trainer_runtimes.pipe:23:22: error: step 'tune' cannot run locally: train_job"),
    "uai_train_tf": ([], 2, "uai_train_tf.pipe:43:11: error: step 'train' cannot run locally: 'data'"),
    "xgboost_training": ([], 2, "xgboost_training.pipe:8:4: error: step 'analyze' cannot run locally: op 'analyze' mounts the PersistentVolumeClaim 'xgboost-data'"),
    # Every step runs on /usr/bin/python3 (numpy from Debian's python3-numpy): the fit
    # of 200 samples of y = 2x + 1 is good, so publish runs.
    "python_ops": ([], 0, {"make": "succeeded", "fit": "succeeded", "judge": "succeeded",
                           "publish": "succeeded"}, "publishing: line: rmse"),
    # Runs: every call (twice, two deep, per loop item, under the condition) runs its
    # pipeline's steps; summary reads the calls' outputs (tests/local local.pipes: values).
    "pipelines_as_steps": ([], 0, {"baseline": "succeeded", "cmp/a/t": "succeeded", "sweep.2/e": "succeeded",
                                   "check/t": "succeeded", "look": "succeeded", "summary": "succeeded"},
                           "pipeline pipelines_as_steps succeeded"),
    # Runs on /usr/bin/python3: the Python ops of each fold (a called pipeline), then the
    # KFP component (its own python3 program) combines 3 x 15 scored samples; the combined
    # RMSE of the fit is about 0.4, under max_rmse, so release runs.
    "cross_validation": ([], 0, {"f1/data": "succeeded", "f3/fit": "succeeded", "total": "succeeded",
                                 "release": "succeeded"}, "publishing the model: slope 2."),
    # Runs: the container step on /usr/bin/python3; the PyTorch job's replicas need
    # torchrun, which only its image has, so the later jobs do not run. The scheduling
    # fields are said not applied, once each.
    "shared_cluster": ([], 1, {"data": "succeeded", "ddp": "failed", "allreduce": "not run"},
                       "'priority_class' is not applied by a local run"),
    "use_file": ([], 2, "use_file.pipe:13:11: error: step 'train' cannot run locally: 'data'"),
}

if NAME not in EXPECT:
    print(f"FAIL: {NAME} has no expectation in {__file__}")
    sys.exit(1)
args, status, text, *also = EXPECT[NAME]
run_dir = os.path.join(WORK, NAME)
subprocess.run(["rm", "-rf", run_dir])
p = subprocess.run([PIPEC, "run", "--local", EXAMPLE, "--run-dir", run_dir, *args],
                   capture_output=True, text=True, timeout=120)
out = p.stdout + p.stderr
print(out)
if p.returncode != status:
    print(f"FAIL: exit {p.returncode}, expected {status}")
    sys.exit(1)
if isinstance(text, str) and text not in out:
    print(f"FAIL: no {text!r} in the output")
    sys.exit(1)
if isinstance(text, dict):
    steps = {s["step"]: s["outcome"] for s in json.load(open(os.path.join(run_dir, "summary.json")))["steps"]}
    for step, outcome in text.items():
        if steps.get(step) != outcome:
            print(f"FAIL: step {step} {steps.get(step)}, expected {outcome}")
            sys.exit(1)
for t in also:
    if t not in out:
        print(f"FAIL: no {t!r} in the output")
        sys.exit(1)
if status == 2 and os.path.exists(os.path.join(run_dir, "steps")):
    print("FAIL: a step ran")
    sys.exit(1)
if status in (0, 1) and json.load(open(os.path.join(run_dir, "summary.json")))["pipeline"] != NAME:
    print("FAIL: summary.json")
    sys.exit(1)
print("ok")
