#!/usr/bin/python3
"""pipec names the values that cross DAGs as kfp 2.17 does (docs/kfp-v2.md, "Names"):
names.py compiled by the vendored SDK and names.pipe (the same pipeline) built by pipec give,
for each container task, the same chain of DAGs above it: at each level the component's
input names and types, how the task that runs it fills each input (a root parameter, a
task's output key, an input of the enclosing DAG, with its field selector), its loop's items
and item input, its condition, and the outputs a loop gives (fan-in). DAG tasks and
components are named differently on purpose (kfp counts: for-loop-1, condition-3; pipec
names them after the loop or the step), so a DAG task's name is compared as "DAG".

usage: names_test.py PIPEC KFP_DSL_COMPILE KFP_V2_VALIDATE DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

pipec, kfp_compile, validate, here = sys.argv[1:5]


def compile_both(tmp):
    kfp, ours = os.path.join(tmp, "kfp.yaml"), os.path.join(tmp, "pipec.yaml")
    r = subprocess.run([kfp_compile, os.path.join(here, "names.py"), kfp, "--function", "names"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        if "cannot import" in r.stderr:
            print("SKIP: the vendored kfp SDK cannot run here")
            sys.exit(77)
        sys.exit(1)
    subprocess.run([pipec, "build", "--target", "kfp-v2", os.path.join(here, "names.pipe"), "-o", ours, "-q"],
                   check=True)
    subprocess.run([validate, ours], check=True, stdout=subprocess.DEVNULL)
    with open(kfp) as f:
        k = yaml.safe_load(f)
    with open(ours) as f:
        p = next(yaml.safe_load_all(f))
    return k, p


def chains(spec):
    """{container task: [level, ...]} from the root down."""
    comps = spec["components"]
    found = {}

    def is_dag(task):
        return "dag" in comps[task["componentRef"]["name"]]

    def source(v, tasks):
        if "runtimeValue" in v:
            return ["constant"]
        if "componentInputParameter" in v:
            s = ["input", v["componentInputParameter"]]
        else:
            t = v["taskOutputParameter"]
            producer = t["producerTask"]
            s = ["output", "DAG" if is_dag(tasks[producer]) else producer, t["outputParameterKey"]]
        return s + ([v["parameterExpressionSelector"]] if "parameterExpressionSelector" in v else [])

    def walk(dag, above):
        tasks = dag["dag"]["tasks"]
        for name, task in sorted(tasks.items()):
            comp = comps[task["componentRef"]["name"]]
            condition = task.get("triggerPolicy", {}).get("condition", "")
            while condition.startswith("(") and condition.endswith(")"):
                condition = condition[1:-1]
            level = {
                "inputs": {k: source(v, tasks) for k, v in task.get("inputs", {}).get("parameters", {}).items()},
                "component inputs": {k: v["parameterType"] for k, v in
                                     comp.get("inputDefinitions", {}).get("parameters", {}).items()},
                "component outputs": sorted(comp.get("outputDefinitions", {}).get("parameters", {})),
                "iterator": task.get("parameterIterator"),
                "condition": condition,
            }
            if "dag" in comp:
                walk(comp, above + [level])
            else:
                found[name] = above + [level]
    walk(spec["root"], [])
    return found


def main():
    with tempfile.TemporaryDirectory() as tmp:
        k, p = compile_both(tmp)
    theirs, mine = chains(k), chains(p)
    failures = []
    if sorted(theirs) != sorted(mine):
        failures.append(f"container tasks: kfp {sorted(theirs)}, pipec {sorted(mine)}")
    for task in sorted(set(theirs) & set(mine)):
        if theirs[task] != mine[task]:
            failures.append(f"{task}:\n    kfp   {json.dumps(theirs[task], sort_keys=True)}\n"
                            f"    pipec {json.dumps(mine[task], sort_keys=True)}")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print(f"{len(mine)} container tasks, the same names at every level")


main()
