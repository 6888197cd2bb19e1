#!/usr/bin/env python3
"""The KFP v2 spec of a program, run by kfp 2.17's own local orchestrator
(shared/tools/kfp-local-run, with --backend-driver: conditions as the backend's driver
evaluates them), agrees with `pipec run --local` of the same program: the same container
steps succeed (so the same branches are taken) and each of their outputs has the same text
(so each step got the same values).

  local_agreement_test.py PIPEC KFP_LOCAL_RUN WORKDIR CASE.pipe

Each `# run: NAME=JSON ...` line of CASE.pipe is one run with those parameters (none: one
run with the defaults). A `# differs: STEP OUTPUT "LOCAL" "KFP"` line (JSON strings) names
an output whose texts differ as docs/local.md says: each must be exactly that. A
`# driver: kfp` line runs kfp.local's own loop and condition resolution (no
--backend-driver), which finds a loop's items by kfp's channel names. Exit 77 (skipped) when kfp-local-run or bwrap is missing.
"""
import json
import os
import shutil
import subprocess
import sys

PIPEC, KFP_RUN, WORK, CASE = sys.argv[1:5]
NAME = os.path.splitext(os.path.basename(CASE))[0]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def runs():
    found = []
    with open(CASE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# run:"):
                found.append(line[len("# run:"):].split())
    return found or [[]]


def differences():
    found = {}
    with open(CASE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# differs:"):
                step, output, rest = line[len("# differs:"):].split(None, 2)
                texts = json.loads("[" + rest.strip().replace('" "', '", "', 1) + "]")
                found[(step, output)] = tuple(texts)
    return found


def local(args, out):
    """The outputs of each container step that succeeded in `pipec run --local`."""
    params = []
    for a in args:
        k, v = a.split("=", 1)
        v = json.loads(v)
        params += ["-p", k + "=" + (v if isinstance(v, str) else json.dumps(v))]
    p = subprocess.run([PIPEC, "run", "--local", CASE, *params, "--run-dir", out],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"pipec run --local {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    steps = {}
    for s in summary["steps"]:
        if s["outcome"] != "succeeded" or s["kind"].startswith("pipeline "):
            continue
        folder = os.path.join(out, "steps", s["step"], "outputs")
        outputs = {}
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                outputs[name] = f.read()
        steps[s["step"]] = outputs
    return steps


def kfp(args, out):
    """The outputs of each container task kfp.local ran, named as the local run names its
    step: the tasks' display names on the way, without condition wrappers."""
    spec = os.path.join(out, "spec.yaml")
    p = subprocess.run([PIPEC, "build", "--target", "kfp-v2", CASE, "-o", spec],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fail(f"pipec build --target kfp-v2: {p.stderr}")
    report = os.path.join(out, "report.json")
    with open(CASE, encoding="utf-8") as f:
        driver = [] if any(line.strip() == "# driver: kfp" for line in f) else ["--backend-driver"]
    p = subprocess.run([KFP_RUN, *driver, "--report", report, spec, *args],
                       cwd=out, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"kfp-local-run {' '.join(args)}: exit {p.returncode}\n{p.stdout[-4000:]}\n{p.stderr[-2000:]}")
    with open(report, encoding="utf-8") as f:
        tasks = json.load(f)["tasks"]
    steps = {}
    for t in tasks:
        # A task that builds a pipeline call's string (comp-pipec-text) is no step of its own.
        if t["status"] != "SUCCESS" or t["path"][-1]["component"] == "comp-pipec-text":
            continue
        # A loop's iteration i: the step (or call) in it is STEP.i (STEP.i.j in nested
        # loops), as locally.
        names, iterations = [], ""
        for p in t["path"]:
            if p["iteration"] is not None:
                iterations += f".{p['iteration']}"
            elif not p["display"].startswith(("condition-", "exit-handler-")):
                names.append(p["display"] + iterations)
                iterations = ""
        key = "/".join(names)
        steps[key] = {k: v.get("raw") for k, v in sorted(t["outputs"].items()) if "raw" in v}
    return steps


def main():
    if not os.access(KFP_RUN, os.X_OK) or shutil.which("bwrap") is None:
        print("kfp-local-run or bwrap is missing: skipped")
        sys.exit(77)
    for i, args in enumerate(runs()):
        out = os.path.join(WORK, f"{NAME}-{i}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        mine = local(args, os.path.join(out, "local"))
        theirs = kfp(args, out)
        print(f"run {args}: local {json.dumps(mine, sort_keys=True)}")
        print(f"run {args}: kfp.local {json.dumps(theirs, sort_keys=True)}")
        if sorted(mine) != sorted(theirs):
            fail(f"run {args}: steps that ran: pipec run --local {sorted(mine)}, kfp.local {sorted(theirs)}")
        expected = differences()
        for step, outputs in mine.items():
            for name in sorted(set(outputs) | set(theirs[step])):
                a, b = outputs.get(name), theirs[step].get(name)
                want = expected.pop((step, name), (b, b))
                if (a, b) != want:
                    fail(f"run {args}: output {name} of {step}: pipec run --local {a!r}, kfp.local {b!r}"
                         + (f" (expected {want[0]!r} and {want[1]!r}, docs/local.md)" if want != (b, b) else ""))
        if expected:
            fail(f"run {args}: listed differences of no step that ran: {sorted(expected)}")
    print("agree")


main()
