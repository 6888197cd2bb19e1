#!/usr/bin/python3
"""Compares pipec's resolved container command lines with kfp 1.8.22's for the same component
and arguments.

Usage: kfp_resolve_compare.py SDK_DIR PIPEC COMPONENT.yaml PROGRAM.pipe CALLS.json

SDK_DIR: sdk/python of kubeflow/pipelines at tag 1.8.22. When it is empty or kfp cannot be
imported from it, prints "skipped: ..." and exits 77 (CTest's SKIP_RETURN_CODE).

CALLS.json: {"step name": {"KFP input name": value, ...}, ...}, the arguments each step of
PROGRAM.pipe gives (files as any value). kfp's side: the arguments with the component's
defaults added (as kfp.dsl._component_bridge does), then
kfp.components._components._resolve_command_line_and_paths, the function dsl-compile resolves
a component's command line with, with the bridge's placeholder resolver. pipec's side: the
Argo workflow `pipec build` writes, each step's template with its `{{inputs.parameters.X}}`
replaced by the step's argument (pipeline parameters by their defaults) and Argo's
expression tags for literal braces (`{{='\\u007b\\u007b'}}`) by the braces they give. Prints
each step's two command lines; exit 1 if any differ.
"""
import re
import json
import subprocess
import sys

import yaml


def kfp_side(sdk, component, calls):
    sys.argv = ["kfp_load.py", sdk]
    src = open(__file__.replace("kfp_resolve_compare.py", "kfp_load.py")).read()
    scope = {"__name__": "kfp_load_module"}
    exec(compile(src.replace("\nmain()\n", "\n"), "kfp_load.py", "exec"), scope)
    sys.path.insert(0, sdk)
    sys.meta_path.insert(0, scope["_Finder"]())
    from kfp.components import _components
    from kfp.dsl import _component_bridge
    spec = _components._load_component_spec_from_component_text(open(component).read())
    out = {}
    for step, given in calls.items():
        arguments = dict(given)
        for i in spec.inputs or []:  # as _create_container_op_from_component_and_arguments
            if i.name not in arguments and i.default is not None:
                d = i.default
                d = int(d) if i.type == "Integer" else float(d) if i.type == "Float" else d
                arguments[i.name] = d
        resolver = _component_bridge.ExtraPlaceholderResolver()
        r = _components._resolve_command_line_and_paths(
            component_spec=spec, arguments=arguments,
            placeholder_resolver=resolver.resolve_placeholder)
        out[step] = list(r.command) + list(r.args)
    return out


def pipec_side(pipec, program):
    text = subprocess.run([pipec, "build", program, "-q", "-o", "-"], check=True,
                          capture_output=True, text=True).stdout
    wf = yaml.safe_load(text)
    params = {p["name"]: p.get("value") for p in wf["spec"].get("arguments", {}).get("parameters", [])}
    templates = {t["name"]: t for t in wf["spec"]["templates"]}
    out = {}
    for t in wf["spec"]["templates"]:
        for task in (t.get("dag") or {}).get("tasks", []):
            tmpl = templates[task["template"]]
            step = tmpl["metadata"]["annotations"]["pipelines.kubeflow.org/task_display_name"]
            args = {}
            for a in (task.get("arguments") or {}).get("parameters", []):
                v = str(a["value"])
                for k, pv in params.items():
                    v = v.replace("{{workflow.parameters.%s}}" % k, str(pv))
                args[a["name"]] = v
            words = []
            for w in tmpl["container"].get("command", []) + tmpl["container"].get("args", []):
                # Argo's tags, resolved as Argo resolves them: an input parameter's value, an
                # expression tag of literal braces (the Argo writer's escape of `{{`).
                def tag(m):
                    inner = m.group(1)
                    if inner.startswith("inputs.parameters."):
                        return args.get(inner[len("inputs.parameters."):], m.group(0))
                    if inner.startswith("='") and inner.endswith("'"):
                        return inner[2:-1].replace("\\u007b", "{").replace("\\u007d", "}")
                    return m.group(0)
                words.append(re.sub(r"\{\{(inputs\.parameters\.[^}]*|='[^']*')\}\}", tag, w))
            out[step] = words
    return out


def main():
    sdk, pipec, component, program, calls_file = sys.argv[1:6]
    calls = json.load(open(calls_file))
    try:
        if not sdk:
            raise ImportError("no SDK folder given (set PIPEC_KFP_SDK_DIR: sdk/python of "
                              "kubeflow/pipelines at tag 1.8.22)")
        theirs = kfp_side(sdk, component, calls)
    except ImportError as e:
        print(f"skipped: kfp 1.8.22 cannot be imported from '{sdk}': {e}")
        return 77
    ours = pipec_side(pipec, program)
    bad = 0
    for step in calls:
        same = ours.get(step) == theirs[step]
        bad += not same
        print(("same" if same else "DIFFERENT"), step)
        print("  kfp:  ", json.dumps(theirs[step]))
        print("  pipec:", json.dumps(ours.get(step)))
    return 1 if bad else 0


sys.exit(main())
