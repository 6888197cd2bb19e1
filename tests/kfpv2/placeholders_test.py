#!/usr/bin/python3
"""placeholders_test.py PIPEC CASE.pipe...: compiles each case with --target kfp-v2 and checks
what kfp-v2-validate does not (it checks no run-time placeholder): every
{{$.inputs.parameters['x']}} in an executor's container (image, command, args) names a
parameter input of each component that runs the executor, and every task calling such a
component gives that input (or it has a default). An image holding a placeholder must be
exactly one whole placeholder: the only form the KFP v2 backend resolves in an image
(kubeflow/pipelines#11404)."""
import re
import subprocess
import sys

import yaml

PLACEHOLDER = re.compile(r"\{\{\$\.inputs\.parameters\['([^']*)'\]\}\}")


def check(pipec, source):
    text = subprocess.run([pipec, "build", "--target", "kfp-v2", source, "-o", "-", "-q"],
                          check=True, capture_output=True, text=True).stdout
    spec = next(yaml.safe_load_all(text))
    executors = spec["deploymentSpec"]["executors"]
    components = dict(spec.get("components", {}))
    components["root"] = spec["root"]
    problems = []
    used = {}  # component -> placeholder names its executor needs
    for cname, comp in components.items():
        label = comp.get("executorLabel")
        if not label:
            continue
        container = executors[label].get("container", {})
        inputs = comp.get("inputDefinitions", {}).get("parameters", {})
        image = container.get("image", "")
        names = PLACEHOLDER.findall(image)
        if names and not PLACEHOLDER.fullmatch(image):
            problems.append(f"{cname}: image {image!r} is not one whole placeholder")
        for word in container.get("command", []) + container.get("args", []):
            names += PLACEHOLDER.findall(word)
        for n in names:
            if n not in inputs:
                problems.append(f"{cname}: placeholder for {n!r} names no input parameter")
        used[cname] = {n for n in names if "defaultValue" not in inputs.get(n, {})}
    for cname, comp in components.items():
        for tname, task in comp.get("dag", {}).get("tasks", {}).items():
            ref = task["componentRef"]["name"]
            given = set(task.get("inputs", {}).get("parameters", {}))
            for n in sorted(used.get(ref, set()) - given):
                problems.append(f"{cname}/{tname}: calls {ref} without input {n!r} that its container needs")
    return problems


def main():
    pipec = sys.argv[1]
    failures = 0
    for source in sys.argv[2:]:
        with open(source, encoding="utf-8") as f:
            if "\n# Argo only:" in f.read():  # a form KFP v2 refuses at its field, by design
                continue
        problems = check(pipec, source)
        for p in problems:
            print(f"FAIL: {source}: {p}")
        failures += len(problems)
        if not problems:
            print(f"ok: {source}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
