#!/usr/bin/env python3
"""The compiler and the launcher agree (issue 25): every word the compiler writes for a
training step is accepted by pipec-launcher's own parser and renderer.

Each program (every dsl-example, every build golden, and every_argument.pipe, which gives
each training-op argument of stdlib/arena.pipe once as a literal and once from a
parameter) is built for Argo (plain, --mpi-v1, --training-runtime pods,trainer-v2) and for
KFP v2. For every container that runs pipec-launcher, its words are taken from the built
workflow, the placeholders are replaced by the values a run would give (the pipeline
parameter's default where the step's input comes from one; otherwise a valid value of the
input's kind), and `pipec-launcher --dry-run WORDS` must exit 0: it runs the launcher's
command-line parser, renders the job with the values and checks the metrics, as a real
step does before it talks to the cluster.

usage: compiler_words_test.py PIPEC PIPEC_LAUNCHER FILE.pipe...
"""
import json
import os
import re
import subprocess
import sys

import yaml

pipec, launcher, files = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
failures = []
checked = {"steps": 0, "words": 0}
flags_seen = set()
kinds_seen = set()

# A valid text for a value of each binding kind, and for each option given a value.
SAMPLE_BY_KIND = {
    "string": "x", "env": "x", "int": "1", "count": "1", "quantity": "1", "bool": "true",
    "data": "[]", "tolerations": "[]", "env-map": "{}", "node-selector": "{}",
    "gpu-resource": "", "clean-pod-policy": "Running", "success-policy": "",
    "queue": "q", "priority-class": "", "label": "x",
}
SAMPLE_BY_FLAG = {
    "--pending-timeout": "0", "--running-timeout": "0", "--runtime": "", "--trainer-runtime": "",
    "--tf-chief-role": "", "--tensorboard": "", "--metric-value": "loss",
    "--metric-list-value": '["loss"]',
}
EXECUTOR_INPUT = json.dumps({"outputs": {"outputFile": "/tmp/pipec-words-test/output.json",
                                         "artifacts": {"metrics": {"artifacts": [{"name": "metrics"}]}}}})


def text_of(value):
    """A parameter's value as the run passes it: strings as they are, others as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def sample_for(words, name):
    """A valid text for the value NAME, from how the words use it."""
    for i, w in enumerate(words):
        if w == "--bind" and i + 1 < len(words):
            pointer_name, _, kind = words[i + 1].rpartition(":")
            names = pointer_name.rpartition("=")[2].split(",")
            if name in names:
                return SAMPLE_BY_KIND[kind]
        if w in SAMPLE_BY_FLAG and i + 1 < len(words) and words[i + 1] == name:
            return SAMPLE_BY_FLAG[w]
    return "x"


def run_words(label, words):
    checked["steps"] += 1
    checked["words"] += len(words)
    for w in words:
        if w.startswith("--"):
            flags_seen.add(w.split("=")[0])
    for i, w in enumerate(words):
        if w == "--bind":
            kinds_seen.add(words[i + 1].rpartition(":")[2])
    left = [w for w in words if "{{" in w]
    if left:
        failures.append(f"{label}: placeholders left: {left}")
        return
    env = {k: v for k, v in os.environ.items() if k not in ("POD_UID",)}
    env["POD_NAME"] = "step-pod-1"
    r = subprocess.run([launcher, "--dry-run", *words], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        failures.append(f"{label}: pipec-launcher refused the words (exit {r.returncode}): "
                        f"{r.stderr.strip()}\n    words: {words}")
        return
    job = json.loads(r.stdout)
    if job.get("kind") not in ("MPIJob", "TFJob", "PyTorchJob", "TrainJob"):
        failures.append(f"{label}: --dry-run printed no job: {r.stdout[:200]}")


def argo_steps(label, wf):
    params = {p["name"]: p.get("value") for p in wf["spec"].get("arguments", {}).get("parameters", [])}
    # Which task arguments feed each template's inputs.
    feeds = {}
    for t in wf["spec"]["templates"]:
        tasks = list((t.get("dag") or {}).get("tasks", []))
        for group in t.get("steps") or []:
            tasks.extend(group)
        for task in tasks:
            for p in (task.get("arguments") or {}).get("parameters", []):
                feeds.setdefault(task["template"], {}).setdefault(p["name"], p.get("value"))
    for t in wf["spec"]["templates"]:
        c = t.get("container")
        if not c or c.get("command") != ["pipec-launcher"]:
            continue
        words = list(c.get("args", []))
        defaults = {p["name"]: p.get("value") for p in (t.get("inputs") or {}).get("parameters", [])}

        def value(m, words=words, name_of=t["name"], defaults=defaults):
            name = m.group(1)
            v = feeds.get(name_of, {}).get(name, defaults.get(name))
            whole = re.fullmatch(r"\{\{workflow\.parameters\.([A-Za-z0-9_-]+)\}\}", v or "")
            if whole and params.get(whole.group(1)) is not None:
                return params[whole.group(1)]
            if v is not None and "{{" not in v:
                return v
            return sample_for(words, name)

        words = [re.sub(r"\{\{inputs\.parameters\.([A-Za-z0-9_-]+)\}\}", value, w) for w in words]
        words = [w.replace("{{workflow.name}}", "wf-1").replace("{{pod.name}}", "wf-1-step-1")
                 for w in words]
        run_words(f"{label} template {t['name']}", words)


def kfpv2_steps(label, spec):
    root_params = {n: p.get("defaultValue")
                   for n, p in ((spec.get("root") or {}).get("inputDefinitions") or {}).get("parameters", {}).items()}
    # Which task inputs feed each executor's parameters, through the component that names it.
    executor_of = {n: (c.get("executorLabel")) for n, c in spec.get("components", {}).items()}
    feeds = {}

    def walk(dag, outer):
        for task in (dag or {}).get("tasks", {}).values():
            comp = task["componentRef"]["name"]
            given = {}
            for n, p in (task.get("inputs") or {}).get("parameters", {}).items():
                if "runtimeValue" in p:
                    given[n] = text_of(p["runtimeValue"]["constant"])
                elif "componentInputParameter" in p and outer.get(p["componentInputParameter"]) is not None:
                    given[n] = outer[p["componentInputParameter"]]
            ex = executor_of.get(comp)
            if ex:
                for n, v in given.items():
                    feeds.setdefault(ex, {}).setdefault(n, v)
            walk(spec["components"][comp].get("dag"), given)

    walk((spec.get("root") or {}).get("dag"), {n: text_of(v) for n, v in root_params.items() if v is not None})
    for name, ex in (spec.get("deploymentSpec") or {}).get("executors", {}).items():
        c = ex.get("container") or {}
        if c.get("command") != ["pipec-launcher"]:
            continue
        words = list(c.get("args", []))

        def value(m, words=words, name=name):
            n = m.group(1)
            v = feeds.get(name, {}).get(n)
            return v if v is not None else sample_for(words, n)

        # Twice: a task input may be a string built from the task's other inputs.
        for _ in range(2):
            words = [re.sub(r"\{\{\$\.inputs\.parameters\['([A-Za-z0-9_-]+)'\]\}\}", value, w) for w in words]
        # KFP's driver resolves the run's resource name in a task input (the workspace's claim).
        words = [w.replace("{{$.pipeline_job_name}}", "run-1").replace("{{$.pipeline_job_resource_name}}", "run-1-x7k2p")
                  .replace("{{$.outputs.artifacts['metrics'].path}}", "/tmp/pipec-words-test/metrics.json")
                  .replace("{{$.outputs.artifacts['metric_series'].path}}", "/tmp/pipec-words-test/metric-series.json")
                  .replace("{{$}}", EXECUTOR_INPUT) for w in words]
        run_words(f"{label} executor {name}", words)


builds = [("argo", []), ("argo --mpi-v1", ["--mpi-v1"]),
          ("argo --training-runtime pods,trainer-v2", ["--training-runtime", "pods,trainer-v2"]),
          ("kfp-v2", ["--target", "kfp-v2"])]
for path in files:
    with open(path, encoding="utf-8") as f:
        argo_only = "\n# Argo only:" in f.read()  # a form KFP v2 refuses at its field, by design
    for label, extra in builds:
        if argo_only and label == "kfp-v2":
            continue
        where = f"{os.path.basename(path)} ({label})"
        b = subprocess.run([pipec, "build", os.path.basename(path), "-o", "-", "-q", "--allow-oversize", *extra],
                           capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(path)))
        if b.returncode != 0:
            failures.append(f"{where}: build failed: {b.stderr.strip()}")
            continue
        doc = next(yaml.safe_load_all(b.stdout))  # kfp-v2: the platform spec follows
        if "deploymentSpec" in doc:
            kfpv2_steps(where, doc)
        else:
            argo_steps(where, doc)

# The test must have seen what it claims: every training op's words, every binding kind and
# every metric form the compiler writes.
for flag in ("--metric", "--metric-value", "--metric-list-value", "--tensorboard", "--runtime",
             "--trainer-runtime", "--tf-chief-role", "--pending-timeout", "--running-timeout",
             "--executor-input", "--metrics-file"):
    if flag not in flags_seen:
        failures.append(f"no built step has the launcher option {flag}")
for kind in SAMPLE_BY_KIND:
    if kind == "bool":  # the launcher's kind for hand-written calls: no op argument is a bool
        continue
    if kind not in kinds_seen:
        failures.append(f"no built step binds a value of kind {kind}")

for f in failures:
    print("FAIL:", f)
print(f"{checked['steps']} launcher steps, {checked['words']} words checked; "
      f"options {sorted(flags_seen)}; kinds {sorted(kinds_seen)}")
sys.exit(1 if failures else 0)
