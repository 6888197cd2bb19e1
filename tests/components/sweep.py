#!/usr/bin/python3
"""Imports KFP component files into pipec and checks what the issue asks of each one.

Usage: sweep.py PIPEC TOOLS_DIR OUT_DIR FILE...

For each component.yaml: `pipec component show` prints its op; a pipeline that uses it and
calls it with its required arguments (from the shown declaration: strings and numbers from
pipeline parameters, so inject-check has values to inject; files from a step that makes
one) builds for kfp-v1 and kfp-v2, twice each, byte-identical; the Argo workflow passes
validate-workflow and inject-check, the KFP v2 spec kfp-v2-validate. Prints one line per
file ("ok FILE" or "fail FILE: STAGE: first line of the error") and the counts.
"""
import os
import re
import subprocess
import sys

PARAM = re.compile(r"^  ([a-z_][a-z0-9_]*): ([a-z<>]+)( = .*)?,$")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def pipeline_for(path, show):
    """The .pipe source of a pipeline calling the op `show` declares."""
    lines = show.splitlines()
    op = next(l for l in lines if l.startswith("op ")).split("(")[0][3:]
    params, args, optional_next = [], [], False
    in_outputs = False
    for line in lines:
        if line.startswith(")") and "->" in line:
            in_outputs = True
        if "(optional: a step may leave it out)" in line:
            optional_next = True
            continue
        m = PARAM.match(line)
        if not m or in_outputs:
            continue
        name, type_, default = m.group(1), m.group(2), m.group(3)
        if default or optional_next:
            optional_next = False
            continue
        if type_ == "file":
            args.append(f"{name}: make.f")
        else:
            value = {"int": "1", "float": "0.5", "bool": "true"}.get(type_, '"x"')
            params.append(f"  param p_{name}: {type_} = {value}")
            args.append(f"{name}: p_{name}")
    src = [f'use "{os.path.abspath(path)}"', "",
           'op make_file() -> (f: file) {',
           '  image "busybox:1.36"',
           '  command ["sh", "-c", "echo data > /tmp/f"]',
           '  outputs {f: "/tmp/f"}', "}", "",
           "pipeline sweep {"] + params
    if any(a.endswith("make.f") for a in args):
        src.append("  step make = make_file()")
    src.append(f"  step call = {op}({', '.join(args)})")
    src.append("}")
    return "\n".join(src) + "\n"


def check(pipec, tools, out, index, path):
    show = run([pipec, "component", "show", path])
    if show.returncode != 0:
        return "show", (show.stderr or show.stdout).strip().splitlines()[0]
    pipe = os.path.join(out, f"c{index}.pipe")
    with open(pipe, "w") as f:
        f.write(pipeline_for(path, show.stdout))
    for target, ext in (("kfp-v1", "yaml"), ("kfp-v2", "yaml")):
        outs = []
        for n in (1, 2):
            o = os.path.join(out, f"c{index}.{target}.{n}.{ext}")
            b = run([pipec, "build", pipe, "--target", target, "-o", o])
            if b.returncode != 0:
                return f"build {target}", (b.stderr or b.stdout).strip().splitlines()[0]
            outs.append(open(o, "rb").read())
        if outs[0] != outs[1]:
            return f"build {target}", "two builds differ"
        o = os.path.join(out, f"c{index}.{target}.1.{ext}")
        if target == "kfp-v1":
            v = run([os.path.join(tools, "validate-workflow/validate"), o])
            if v.returncode != 0:
                return "validate-workflow", (v.stdout + v.stderr).strip().splitlines()[0]
            v = run([os.path.join(tools, "inject-check/inject-check"), o])
            if v.returncode != 0:
                lines = [l for l in (v.stdout + v.stderr).splitlines() if l.strip()]
                return "inject-check", " | ".join(lines[:3])
        else:
            v = run([os.path.join(tools, "kfp-v2-validate/validate"), "-q", o])
            if v.returncode != 0:
                return "kfp-v2-validate", (v.stdout + v.stderr).strip().splitlines()[0]
    return None, None


def main():
    pipec, tools, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    counts = {}
    for i, path in enumerate(sys.argv[4:]):
        stage, why = check(pipec, tools, out, i, path)
        if stage is None:
            print("ok", path, flush=True)
            counts["ok"] = counts.get("ok", 0) + 1
        else:
            print(f"fail {path}: {stage}: {why}", flush=True)
            counts[stage] = counts.get(stage, 0) + 1
    print("counts:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0 if counts.get("ok", 0) == len(sys.argv) - 4 else 1


sys.exit(main())
