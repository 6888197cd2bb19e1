#!/usr/bin/python3
"""Imports KFP component files into pipec and checks what the issue asks of each one.

Usage: sweep.py PIPEC TOOLS_DIR OUT_DIR FILE...

For each component.yaml: `pipec component show` prints its op; a pipeline that uses it and
calls it with its required arguments (from the shown declaration: strings and numbers from
pipeline parameters, so inject-check has values to inject; files from a step that makes
one) builds for kfp-v1 and kfp-v2, twice each, byte-identical; the Argo workflows pass
validate-workflow and inject-check, the KFP v2 specs kfp-v2-validate (each checker runs over
50 files at a time; a failing batch is run again file by file). Prints one line per file
("ok FILE" or "fail FILE: STAGE: the error") and the counts; exit 1 unless all are ok.
"""
import os
import re
import subprocess
import sys

PARAM = re.compile(r"^  ([a-z_][a-z0-9_]*): ([a-z<>]+)( = .*)?,$")
# A graph component shows as a pipeline: `pipeline NAME -> (...) {` and `  param NAME: TYPE`.
PIPELINE_PARAM = re.compile(r"^  param ([a-z_][a-z0-9_]*): ([a-z<>]+)( = .*)?$")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def pipeline_for(path, show):
    """The .pipe source of a pipeline calling the op `show` declares."""
    lines = show.splitlines()
    head = next(l for l in lines if l.startswith("op ") or l.startswith("pipeline "))
    graph = head.startswith("pipeline ")
    op = head.split(" ")[1].split("(")[0]
    params, args, optional_next = [], [], False
    in_outputs = False
    for line in lines:
        if "-> (" in line and not graph:
            in_outputs = True
        if "(optional: a step may leave it out)" in line:
            optional_next = True
            continue
        m = (PIPELINE_PARAM if graph else PARAM).match(line)
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


def build(pipec, out, index, path):
    """Shows and builds one component's pipeline. Returns (stage, why) on failure, else
    the two outputs' paths."""
    show = run([pipec, "component", "show", path])
    if show.returncode != 0:
        return ("show", (show.stderr or show.stdout).strip().splitlines()[0]), None
    pipe = os.path.join(out, f"c{index}.pipe")
    with open(pipe, "w") as f:
        f.write(pipeline_for(path, show.stdout))
    built = {}
    for target in ("kfp-v1", "kfp-v2"):
        outs = []
        for n in (1, 2):
            o = os.path.join(out, f"c{index}.{target}.{n}.yaml")
            b = run([pipec, "build", pipe, "-q", "--target", target, "-o", o])
            if b.returncode != 0:
                return (f"build {target}", (b.stderr or b.stdout).strip().splitlines()[0]), None
            outs.append(open(o, "rb").read())
        if outs[0] != outs[1]:
            return (f"build {target}", "two builds differ"), None
        built[target] = os.path.join(out, f"c{index}.{target}.1.yaml")
    return None, built


def verdicts(cmd, files, ok_line):
    """Runs a checker over many files at once; the files it reports a problem for."""
    bad = {}
    for i in range(0, len(files), 50):
        chunk = files[i:i + 50]
        r = run(cmd + chunk)
        if r.returncode == 0:
            continue
        for f in chunk:  # a failing chunk: each file again, alone, for its own verdict
            one = run(cmd + [f])
            if one.returncode != 0:
                lines = [l for l in (one.stdout + one.stderr).splitlines() if l.strip() and not ok_line(l)]
                bad[f] = " | ".join(lines[:3])
    return bad


def main():
    pipec, tools, out = sys.argv[1:4]
    paths = sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    failed, built = {}, {}
    for i, path in enumerate(paths):
        problem, outs = build(pipec, out, i, path)
        if problem:
            failed[path] = problem
        else:
            built[path] = outs
    v1 = {outs["kfp-v1"]: p for p, outs in built.items()}
    v2 = {outs["kfp-v2"]: p for p, outs in built.items()}
    checks = [
        ("validate-workflow", [os.path.join(tools, "validate-workflow/validate")], v1,
         lambda l: l.endswith(": ok")),
        ("inject-check", [os.path.join(tools, "inject-check/inject-check")], v1,
         lambda l: l.startswith("inject:")),
        ("kfp-v2-validate", [os.path.join(tools, "kfp-v2-validate/validate"), "-q"], v2,
         lambda l: False),
    ]
    for stage, cmd, files, ok_line in checks:
        for f, why in verdicts(cmd, sorted(files), ok_line).items():
            failed.setdefault(files[f], (stage, why))
    counts = {}
    for path in paths:
        if path in failed:
            stage, why = failed[path]
            print(f"fail {path}: {stage}: {why}")
            counts[stage] = counts.get(stage, 0) + 1
        else:
            print("ok", path)
            counts["ok"] = counts.get("ok", 0) + 1
    print("counts:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0 if counts.get("ok", 0) == len(paths) else 1


sys.exit(main())
