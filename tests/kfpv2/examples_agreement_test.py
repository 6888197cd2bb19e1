#!/usr/bin/python3
"""Every example that `pipec run --local` can run, run again as its KFP v2 spec by kfp 2.17's
own local orchestrator (shared/tools/kfp-local-run), agrees with the local run: the same
container steps run with the same outcomes, and each output has the same text (a `file`
output: the same bytes), but for the differences docs/local.md lists.

  examples_agreement_test.py PIPEC KFP_LOCAL_RUN WORKDIR EXAMPLES_DIR [PROGRAM.pipe ...]

Every *.pipe of EXAMPLES_DIR and each PROGRAM given is named below: in RUN (with how it is
run and what differs), or in NOT_RUN with the reason, which the test checks still holds (a
training step in the spec, or a local run that cannot run the program). A program in
neither fails the test, as does a stale reason. The examples run in parallel. Exit 77
(skipped) when kfp-local-run or bwrap is missing.
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import local_agreement  # noqa: E402

PIPEC, KFP_RUN, WORK, EXAMPLES = sys.argv[1:5]
PROGRAMS = sys.argv[5:]

# Run with kfp.local's own orchestration, unless "backend driver" names why not: then with
# kfp-local-run --backend-driver, which evaluates each condition and resolves a loop's
# inputs as the KFP v2 backend's driver does (P8, P7 in that tool). docs/kfp-v2.md, "Run
# with kfp 2.17's own local orchestrator", gives each kfp.local limitation with its source
# line; the test finds from the spec which ones an example meets (no example meets the
# third today: it stands for one that will).
OUTPUT_CONDITION = ("a condition reads a step's named output (pipelinechannel--TASK-OUTPUT, as kfp 2.17 "
                    "names it): kfp.local resolves a task output in a condition only when it is named "
                    "Output (kfp/local/orchestrator/enhanced_dag_orchestrator.py:79), else it looks for "
                    "a parent input, logs 'Could not resolve CEL parameter' and takes the condition "
                    "as false (:149-151)")
DOUBLE_CONDITION = ("a float comparison is written double(...) in CEL, as the backend's cel-go "
                    "needs; kfp.local evaluates the condition as Python with no double "
                    "(enhanced_dag_orchestrator.py:180-196) and takes it as false (:202-204)")
LOOP_OUTPUT = ("a loop task takes a step's output (its items, or a value its body reads): kfp.local "
               "looks a loop's items up only among the parent DAG's inputs (enhanced_dag_orchestrator.py:"
               "396-404) and gives each iteration the item in place of every task output the loop task "
               "takes (task_spec_utils.py:153-156)")
RUN = {
    "conditions": {"backend driver": [OUTPUT_CONDITION]},
    "cross_validation": {"backend driver": [OUTPUT_CONDITION, DOUBLE_CONDITION]},
    "exit_handler": {},
    "loops": {},
    "outputs": {},
    # A fan-in of float outputs: texts locally, typed values in KFP v2 (docs/local.md, "A
    # program built for KFP v2: values", row fan-in).
    "pipelines_as_steps": {"differs": {
        ("summary", "report"): ('sweep=["0.90","0.80","0.70"] baseline=0.95 best=0.99 repeats=["0.99","0.99"]',
                                "sweep=[0.9,0.8,0.7] baseline=0.95 best=0.99 repeats=[0.99,0.99]")}},
    "python_ops": {"backend driver": [OUTPUT_CONDITION]},
}
TRAINING = ("its training step runs pipec-launcher, which creates the MPIJob/TFJob/PyTorchJob/TrainJob "
            "through the Kubernetes API: kfp.local has no cluster")
# Not runnable by `pipec run --local` (docs/local.md, "What differs from a cluster run"): the
# reason, and the text its run --local prints, which the test checks.
NOT_ON_HOST = ("pipec run --local cannot run it: its ops run `python` of the image python:3.11-slim, "
               "which a local run does not pull", "'python' is not installed on this host")
CLUSTER_ONLY = ("pipec run --local refuses it: its ops mount the claim xgboost-data and read the Secret "
                "s3-credentials, which exist only in the cluster", "which exists only in the cluster")
NOT_RUN = {
    "constraints": TRAINING,
    "container_op": NOT_ON_HOST,
    "helm_tf_training": TRAINING,
    "mnist_tf": TRAINING,
    "mpi_run": TRAINING,
    "mpi_trainer_v2": TRAINING,
    "ps_worker_tf": TRAINING,
    "pytorch_ddp": TRAINING,
    "pytorch_trainer_v2": TRAINING,
    "seed_local": TRAINING,
    "shared_cluster": TRAINING,
    "trainer_runtimes": TRAINING,
    "uai_train_tf": TRAINING,
    "use_file": TRAINING,
    "workspace": TRAINING,
    "xgboost_training": CLUSTER_ONLY,
}


def build(case, out):
    spec = os.path.join(out, "spec.yaml")
    p = subprocess.run([PIPEC, "build", "--target", "kfp-v2", case, "-o", spec],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise local_agreement.Disagreement(f"pipec build --target kfp-v2: {p.stderr}")
    with open(spec, encoding="utf-8") as f:
        return next(yaml.safe_load_all(f))


def backend_driver_reasons(spec):
    """Which of kfp.local's limits on conditions and loops the spec meets (each stated above)."""
    found = []
    tasks = [t for c in spec["components"].values() for t in c.get("dag", {}).get("tasks", {}).values()]
    tasks += list(spec["root"]["dag"]["tasks"].values())
    for t in tasks:
        if "parameterIterator" in t and any("taskOutputParameter" in v for v in
                                             t.get("inputs", {}).get("parameters", {}).values()):
            found.append(LOOP_OUTPUT)
        condition = t.get("triggerPolicy", {}).get("condition")
        if not condition:
            continue
        for name, value in t.get("inputs", {}).get("parameters", {}).items():
            if "taskOutputParameter" in value and f"['{name}']" in condition and not name.endswith("-Output"):
                found.append(OUTPUT_CONDITION)
        if "double(" in condition:
            found.append(DOUBLE_CONDITION)
    return sorted(set(found))


def run_one(name, case):
    out = os.path.join(WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    start = time.monotonic()
    how = RUN[name]
    spec = build(case, out)
    reasons = backend_driver_reasons(spec)
    if reasons != sorted(how.get("backend driver", [])):
        return [f"the spec meets these kfp.local limits: {reasons or 'none'}; "
                f"the test lists {how.get('backend driver', 'none')}"], 0
    mine, rc = local_agreement.local(PIPEC, case, [], os.path.join(out, "local"))
    theirs, report = local_agreement.kfp(PIPEC, KFP_RUN, case, [], out, bool(reasons))
    problems = local_agreement.compare(mine, theirs, how.get("differs"))
    if (rc == 0) != (report["status"] == "SUCCESS"):
        problems.append(f"pipec run --local exit {rc}, kfp.local {report['status']} {report['reason']}")
    return problems, time.monotonic() - start


def check_not_run(name, case):
    out = os.path.join(WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    spec = build(case, out)
    launchers = [e for e in spec["deploymentSpec"]["executors"].values()
                 if e.get("container", {}).get("command", [""])[0] == "pipec-launcher"]
    if NOT_RUN[name] == TRAINING:
        return [] if launchers else ["listed as having a training step, but no executor runs pipec-launcher"]
    p = subprocess.run([PIPEC, "run", "--local", case, "--run-dir", os.path.join(out, "local")],
                       capture_output=True, text=True, timeout=60)
    if launchers or p.returncode == 0 or NOT_RUN[name][1] not in p.stdout + p.stderr:
        return [f"listed as not runnable locally, but run --local exits {p.returncode} "
                f"({len(launchers)} training executors)"]
    return []


def main():
    if not os.access(KFP_RUN, os.X_OK) or shutil.which("bwrap") is None:
        print("kfp-local-run or bwrap is missing: skipped")
        sys.exit(77)
    cases = {os.path.splitext(f)[0]: os.path.join(EXAMPLES, f)
             for f in sorted(os.listdir(EXAMPLES)) if f.endswith(".pipe")}
    cases.update({os.path.splitext(os.path.basename(p))[0]: p for p in PROGRAMS})
    failures = []
    unnamed = sorted(set(cases) - set(RUN) - set(NOT_RUN))
    if unnamed:
        failures.append(f"programs neither run nor listed as not runnable: {unnamed}")
    gone = sorted((set(RUN) | set(NOT_RUN)) - set(cases))
    if gone:
        failures.append(f"listed programs that are gone: {gone}")
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        jobs = {pool.submit(run_one if n in RUN else check_not_run, n, c): n
                for n, c in cases.items() if n in RUN or n in NOT_RUN}
        for job in concurrent.futures.as_completed(jobs):
            name = jobs[job]
            try:
                result = job.result()
            except (local_agreement.Disagreement, subprocess.TimeoutExpired) as e:
                result = ([str(e)], 0)
            problems, took = result if name in RUN else (result, None)
            if name in RUN:
                how = "--backend-driver" if RUN[name].get("backend driver") else "kfp.local's own"
                print(f"{name}: {'agree' if not problems else 'DIFFER'} ({how}, {took:.1f} s)")
            else:
                reason = NOT_RUN[name]
                print(f"{name}: not run: {reason if reason == TRAINING else reason[0]}")
            failures += [f"{name}: {p}" for p in problems]
    print(f"{len([n for n in cases if n in RUN])} run, {len([n for n in cases if n in NOT_RUN])} not run, "
          f"{time.monotonic() - start:.1f} s")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)


main()
