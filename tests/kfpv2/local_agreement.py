"""One program run twice and compared: by `pipec run --local`, and as its KFP v2 spec by
kfp 2.17's own local orchestrator (shared/tools/kfp-local-run). Used by
local_agreement_test.py (tests/kfpv2/agreement/*.pipe, one case each) and
examples_agreement_test.py (every dsl-examples/*.pipe a local run can run).

A step's result is its outcome (`succeeded` or `failed`; a step that did not run, skipped
by a condition or after a failure, is absent) and its outputs: a value's text, or a file's
bytes as ("sha256", HEX) (kfp.local holds a `file` output as an artifact).
"""
import hashlib
import json
import os
import subprocess

# DAG tasks pipec makes around steps, which a local run does not name (a step's name holds
# no '-' and is never `finally`): condition wrappers, the main DAG of a pipeline with
# `finally`, and the DAG of its finally steps.
WRAPPER_TASKS = ("condition-", "exit-handler-")
# A task that builds a pipeline call's string (comp-pipec-text) or turns the main DAG's final
# state into `run.status` (comp-pipec-run-status) is no step of its own.
HELPER_COMPONENTS = ("comp-pipec-text", "comp-pipec-run-status")


class Disagreement(Exception):
    pass


def _sha256(path):
    with open(path, "rb") as f:
        return ("sha256", hashlib.sha256(f.read()).hexdigest())


def local(pipec, case, args, out, timeout=120):
    """{step: (outcome, outputs)} of each container step `pipec run --local` ran."""
    params = []
    for a in args:
        k, v = a.split("=", 1)
        v = json.loads(v)
        params += ["-p", k + "=" + (v if isinstance(v, str) else json.dumps(v))]
    p = subprocess.run([pipec, "run", "--local", case, *params, "--run-dir", out],
                       capture_output=True, text=True, timeout=timeout)
    summary_file = os.path.join(out, "summary.json")
    if not os.path.isfile(summary_file):
        raise Disagreement(f"pipec run --local {' '.join(args)}: exit {p.returncode}, no summary\n"
                           f"{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    with open(summary_file, encoding="utf-8") as f:
        summary = json.load(f)
    steps = {}
    for s in summary["steps"]:
        if s["outcome"] not in ("succeeded", "failed") or s["kind"].startswith("pipeline "):
            continue
        folder = os.path.join(out, "steps", s["step"], "outputs")
        outputs = {}
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            outputs[name] = {"text": data.decode("utf-8", "surrogateescape"),
                             "sha256": hashlib.sha256(data).hexdigest()}
        steps[s["step"]] = (s["outcome"], outputs if s["outcome"] == "succeeded" else {})
    return steps, p.returncode


def kfp(pipec, kfp_run, case, args, out, backend_driver, timeout=300):
    """{step: (outcome, outputs)} of each container task kfp.local ran, named as the local
    run names its step: the tasks' display names on the way, without pipec's wrapper DAGs,
    a loop's iteration i as STEP.i (STEP.i.j in nested loops)."""
    spec = os.path.join(out, "spec.yaml")
    p = subprocess.run([pipec, "build", "--target", "kfp-v2", case, "-o", spec],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Disagreement(f"pipec build --target kfp-v2: {p.stderr}")
    report = os.path.join(out, "report.json")
    driver = ["--backend-driver"] if backend_driver else []
    p = subprocess.run([kfp_run, *driver, "--report", report, spec, *args],
                       cwd=out, capture_output=True, text=True, timeout=timeout)
    if not os.path.isfile(report):
        raise Disagreement(f"kfp-local-run {' '.join(args)}: exit {p.returncode}, no report\n"
                           f"{p.stdout[-4000:]}\n{p.stderr[-2000:]}")
    with open(report, encoding="utf-8") as f:
        rep = json.load(f)
    steps = {}
    for t in rep["tasks"]:
        if t["path"][-1]["component"].startswith(HELPER_COMPONENTS):
            continue
        names, iterations = [], ""
        for e in t["path"]:
            if e["iteration"] is not None:
                iterations += f".{e['iteration']}"
            elif not e["display"].startswith(WRAPPER_TASKS) and e["display"] != "finally":
                names.append(e["display"] + iterations)
                iterations = ""
        outcome = {"SUCCESS": "succeeded", "FAILURE": "failed"}.get(t["status"], t["status"])
        outputs = {}
        if outcome == "succeeded":
            for k, v in sorted(t["outputs"].items()):
                if "raw" in v:
                    outputs[k] = {"text": v["raw"]}
                elif v.get("sha256"):
                    outputs[k] = {"sha256": v["sha256"]}
        steps["/".join(names)] = (outcome, outputs)
    return steps, rep


def compare(mine, theirs, expected=None):
    """The differences between the two runs' steps, but for `expected`
    {(step, output): (local text, kfp text)}: each of those must be exactly so."""
    expected = dict(expected or {})
    problems = []
    if sorted(mine) != sorted(theirs):
        problems.append(f"steps that ran: pipec run --local {sorted(mine)}, kfp.local {sorted(theirs)}")
        return problems
    for step, (outcome, outputs) in sorted(mine.items()):
        their_outcome, their_outputs = theirs[step]
        if outcome != their_outcome:
            problems.append(f"{step}: pipec run --local {outcome}, kfp.local {their_outcome}")
            continue
        for name in sorted(set(outputs) | set(their_outputs)):
            a, b = outputs.get(name), their_outputs.get(name)
            if a is None or b is None:
                problems.append(f"output {name} of {step}: pipec run --local {a!r}, kfp.local {b!r}")
                continue
            if "text" not in b:  # a file: its bytes
                if a["sha256"] != b["sha256"]:
                    problems.append(f"file output {name} of {step}: sha256 {a['sha256']} locally, "
                                    f"{b['sha256']} in kfp.local")
                continue
            want = expected.pop((step, name), (b["text"], b["text"]))
            if (a["text"], b["text"]) != want:
                problems.append(
                    f"output {name} of {step}: pipec run --local {a['text']!r}, kfp.local {b['text']!r}"
                    + (f" (expected {want[0]!r} and {want[1]!r}, docs/local.md)"
                       if want != (b["text"], b["text"]) else ""))
    if expected:
        problems.append(f"listed differences of no step that ran: {sorted(expected)}")
    return problems
