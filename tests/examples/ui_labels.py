#!/usr/bin/python3
"""The Pipelines UI labels every step with the name the user gave it.

Usage: ui_labels.py PIPEC FILE.pipe

Builds FILE.pipe to YAML and applies the labelling rule of the KFP UI's
frontend/src/lib/StaticGraphParser.ts to every task of every DAG template: a task
whose template is not a DAG is a node labelled with its template's
`pipelines.kubeflow.org/task_display_name` annotation, else with the template's
name; a task whose template is a DAG is expanded in place. Each such label must be
the name of a `step` in the program (the task name is that name made a DNS label),
and each step of the program must be drawn under its own name.
"""
import re
import subprocess
import sys

import yaml

pipec, source = sys.argv[1], sys.argv[2]
text = subprocess.run([pipec, "build", source, "-o", "-", "-q"], check=True,
                      capture_output=True, text=True).stdout
workflow = yaml.safe_load(text)
templates = {t["name"]: t for t in workflow["spec"]["templates"]}

program = open(source, encoding="utf-8").read()
pipeline = program[program.index("pipeline "):]
# A step that calls a pipeline runs its DAG template, which the UI expands in place: the
# called pipeline's steps are drawn, each under its own name, not the call.
pipelines = set(re.findall(r"^pipeline\s+([A-Za-z_][A-Za-z0-9_]*)", program, re.M))
steps = {name for name, op in re.findall(r"\bstep\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)", pipeline)
         if op not in pipelines}


def dns1123(name):
    return name.lower().replace("_", "-")


labels = []
for tmpl in templates.values():
    for task in (tmpl.get("dag") or {}).get("tasks", []):
        child = templates[task["template"]]
        if "dag" in child:
            continue
        annotations = (child.get("metadata") or {}).get("annotations") or {}
        label = annotations.get("pipelines.kubeflow.org/task_display_name") or task["template"]
        if label not in steps:
            sys.exit(f"{source}: task '{task['name']}' reads '{label}' in the UI, not a step name")
        if dns1123(label) != task["name"]:
            sys.exit(f"{source}: task '{task['name']}' reads '{label}' in the UI")
        labels.append(label)
if sorted(labels) != sorted(steps):
    sys.exit(f"{source}: UI labels {sorted(labels)} but steps {sorted(steps)}")
print(f"{source}: {len(labels)} steps, each under its own name")
