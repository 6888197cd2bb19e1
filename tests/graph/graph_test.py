#!/usr/bin/env python3
"""pipec graph against the compiled workflow, for every dsl-examples/*.pipe and build golden:
the JSON's nodes are the workflow's DAG tasks (by task name, in their DAG: the main one, a
loop's, finally's) and its edges are exactly the tasks' dependencies; an edge marked
'data' is one whose source step's output the target uses (its arguments name
{{tasks.SOURCE.outputs...}} or the loop's items / condition read it). Then dot and mermaid
are written, and SVG is rendered when Graphviz's dot is on PATH (it must be in CI:
scripts/setup.sh installs graphviz; PIPEC_GRAPH_NEED_DOT=1 makes its absence a failure).

usage: graph_test.py PIPEC FILE.pipe...
"""
import json
import os
import shutil
import subprocess
import sys

import yaml

pipec, files = sys.argv[1], sys.argv[2:]
failures = []


def fail(name, why):
    failures.append(f"{name}: {why}")


for path in files:
    name = os.path.basename(path)
    g = subprocess.run([pipec, "graph", path, "--format", "json"], capture_output=True, text=True)
    if g.returncode != 0:
        fail(name, "graph failed: " + g.stderr)
        continue
    graph = json.loads(g.stdout)
    w = subprocess.run([pipec, "build", path, "-o", "-", "-q", "--allow-oversize"], capture_output=True, text=True)
    if w.returncode != 0:
        fail(name, "build failed: " + w.stderr)
        continue
    wf = yaml.safe_load(w.stdout)
    # Every DAG task of the workflow, with its dependencies (by task name).
    tasks, text_of = {}, {}
    for t in wf["spec"]["templates"]:
        if "parallelism" in t:  # a loop's limit: its one task is the loop's own, seen outside
            continue
        dag_tasks = (t.get("dag") or {}).get("tasks", [])
        if any(task["name"] == "pipec-loop-check" for task in dag_tasks):
            # A loop that tolerates failures: the loop and the check that decides its outcome
            # are the loop's own task, seen outside (docs/language.md).
            continue
        for task in (t.get("dag") or {}).get("tasks", []):
            tasks[task["name"]] = set(task.get("dependencies", []))
            text_of[task["name"]] = json.dumps(task)
    by_id = {n["id"]: n for n in graph["nodes"]}
    nodes = {n["task"] for n in graph["nodes"]}
    if nodes != set(tasks):
        fail(name, f"nodes {sorted(nodes ^ set(tasks))} differ between the graph and the workflow")
        continue
    edges = {}
    for e in graph["edges"]:
        src, dst = by_id[e["from"]]["task"], by_id[e["to"]]["task"]
        edges.setdefault(dst, set()).add(src)
        # A data edge: the task reads the source's outputs ({{tasks.SRC.outputs...}} in its
        # arguments, items or condition); an after edge: it does not.
        reads = (f"tasks.{src}.outputs" in text_of.get(dst, "") or
                 f"tasks[\'{src}\'].outputs" in text_of.get(dst, "").replace("''", "'"))
        if e["kind"] not in ("after", "data") or (e["kind"] == "data") != reads:
            fail(name, f"edge {src} -> {dst} is '{e['kind']}' but the task {'reads' if reads else 'does not read'} its outputs")
    for task, deps in tasks.items():
        if edges.get(task, set()) != deps:
            fail(name, f"{task}: graph edges {sorted(edges.get(task, set()))}, workflow {sorted(deps)}")
    for n in graph["nodes"]:
        if n["kind"] not in ("step", "training", "loop", "call"):
            fail(name, f"node kind {n['kind']}")
        # A step that calls a pipeline is a box of the called pipeline's nodes, named
        # CALL/NODE; the workflow runs that pipeline's DAG template as the call's task.
        if n["kind"] == "call":
            inner = [m for m in graph["nodes"] if m["loop"] == n["id"]]
            if not inner or any(not m["id"].startswith(n["id"] + "/") for m in inner):
                fail(name, f"call {n['id']} holds no nodes, or nodes not named {n['id']}/...")
            tmpl = next((t for t in wf["spec"]["templates"] if "dag" in t and
                         any(task["name"] == n["task"] for task in t["dag"]["tasks"])), None)
            called = next((task["template"] for task in (tmpl or {}).get("dag", {}).get("tasks", [])
                           if task["name"] == n["task"]), None)
            body = {t["name"]: t for t in wf["spec"]["templates"]}.get(called, {})
            got = {task["name"] for task in body.get("dag", {}).get("tasks", [])}
            if {m["task"] for m in inner} != got:
                fail(name, f"call {n['id']}: nodes {sorted(m['task'] for m in inner)}, template {called} {sorted(got)}")
    for fmt in ("dot", "mermaid"):
        r = subprocess.run([pipec, "graph", path, "--format", fmt], capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout:
            fail(name, f"--format {fmt} failed: {r.stderr}")
        # A step's label is its name and op on two lines: DOT's line break, not "\\n".
        if fmt == "dot":
            for n in graph["nodes"]:
                if n["kind"] == "call":
                    want = f'label="{n["id"]}: pipeline {n["op"]}"'
                    if want not in r.stdout:
                        fail(name, f"dot label of call {n['id']}: want {want}")
                if n["kind"] not in ("loop", "call") and n.get("op"):
                    want = f'label="{n["id"]}\\n{n["op"]}"'
                    if want not in r.stdout or "\\\\n" in r.stdout:
                        fail(name, f"dot label of {n['id']}: want {want}")
    if shutil.which("dot"):
        r = subprocess.run([pipec, "graph", path, "--format", "svg"], capture_output=True, text=True)
        if r.returncode != 0 or "<svg" not in r.stdout:
            fail(name, "--format svg failed: " + r.stderr)
        elif any(f">{n['id']}<" not in r.stdout for n in graph["nodes"] if n["kind"] not in ("loop", "call")):
            fail(name, "a step's name is missing from the SVG")
        elif any(f">{n['id']}: pipeline {n['op']}<" not in r.stdout for n in graph["nodes"] if n["kind"] == "call"):
            fail(name, "a call's box is not labelled STEP: pipeline NAME in the SVG")
        elif any(n.get("op") and f">{n['op']}<" not in r.stdout for n in graph["nodes"] if n["kind"] not in ("loop", "call")):
            fail(name, "a step's op is not on a line of its own in the SVG")
        elif "\\n" in r.stdout:
            fail(name, "the SVG shows a literal \\n")
    elif os.environ.get("PIPEC_GRAPH_NEED_DOT") == "1":
        fail(name, "Graphviz's dot is not installed (scripts/setup.sh installs graphviz)")

for f in failures:
    print("FAIL:", f)
print(f"{len(files)} programs, {len(failures)} failures")
sys.exit(1 if failures else 0)
