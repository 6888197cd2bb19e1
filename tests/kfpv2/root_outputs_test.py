#!/usr/bin/python3
"""The outputs of the pipeline built, on the KFP v2 target, mean what kfp 2.17 writes for a
pipeline function that returns outputs (root_outputs.py, compiled here with the vendored
SDK; root_outputs.pipe is the same pipeline in pipec).

The specs differ in names (kfp names tasks after components, `for-loop-1`; pipec after
steps, `for-lr`) and in sharing (pipec writes one component per op), so each root output is
compared by what it resolves to: the root's `outputDefinitions` entry exactly, and the chain
from `root.dag.outputs` down to the container output that gives the value: each DAG it
passes (a loop, or a called pipeline's component by its name), the container's op and its
output key, parameter or artifact.

usage: root_outputs_test.py PIPEC KFP_DSL_COMPILE KFP_V2_VALIDATE DIR
"""
import os
import re
import subprocess
import sys
import tempfile

import yaml

pipec, kfp_compile, validate, here = sys.argv[1:5]


def compile_both(tmp):
    kfp = os.path.join(tmp, "kfp.yaml")
    ours = os.path.join(tmp, "pipec.yaml")
    r = subprocess.run([kfp_compile, os.path.join(here, "root_outputs.py"), kfp, "--function", "root_outputs"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        if "cannot import" in r.stderr:
            print("SKIP: the vendored kfp SDK cannot run here")
            sys.exit(77)
        sys.exit(1)
    subprocess.run([pipec, "build", "--target", "kfp-v2", os.path.join(here, "root_outputs.pipe"), "-o", ours, "-q"],
                   check=True)
    subprocess.run([validate, ours], check=True)
    with open(kfp) as f:
        k = yaml.safe_load(f)
    with open(ours) as f:
        p = next(yaml.safe_load_all(f))
    return k, p


def base(component):
    """comp-train-2-2 -> train: kfp writes one component per task, pipec one per op."""
    return re.sub(r"(-\d+)+$", "", component[len("comp-"):])


def chain(spec, dag, kind, name):
    """What output `name` of kind `kind` of `dag` resolves to, down to a container."""
    out = dag["dag"]["outputs"][kind][name]
    if kind == "artifacts":
        (sel,) = out["artifactSelectors"]
        task, key = sel["producerSubtask"], sel["outputArtifactKey"]
    else:
        sel = out["valueFromParameter"]
        task, key = sel["producerSubtask"], sel["outputParameterKey"]
    t = dag["dag"]["tasks"][task]
    comp = spec["components"][t["componentRef"]["name"]]
    if "dag" not in comp:
        return [(base(t["componentRef"]["name"]), key)]
    via = "loop" if "parameterIterator" in t else base(t["componentRef"]["name"])
    return [via] + chain(spec, comp, kind, key)


failures = []
with tempfile.TemporaryDirectory() as tmp:
    kfp, ours = compile_both(tmp)
    if ours["root"].get("outputDefinitions") != kfp["root"]["outputDefinitions"]:
        failures.append(f"outputDefinitions: pipec {ours['root'].get('outputDefinitions')}, "
                        f"kfp {kfp['root']['outputDefinitions']}")
    for kind in ("parameters", "artifacts"):
        names = sorted(kfp["root"]["dag"]["outputs"][kind])
        got = sorted(ours["root"]["dag"].get("outputs", {}).get(kind, {}))
        if got != names:
            failures.append(f"{kind}: pipec {got}, kfp {names}")
            continue
        for name in names:
            want, have = chain(kfp, kfp["root"], kind, name), chain(ours, ours["root"], kind, name)
            print(f"{kind} {name}: {have}")
            if have != want:
                failures.append(f"{kind} {name}: pipec {have}, kfp {want}")
for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
