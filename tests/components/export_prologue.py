#!/usr/bin/env python3
"""The prologue of an exported component, run for real (issue 42): `pipec component export`
of ops.pipe's `report` (a file input, a value in the environment, a working_dir, a file
output), its `sh -c` script run by /bin/sh in a temporary folder with KFP's placeholders
filled in as a run fills them:

* an input KFP placed at the path the op reads (the default) runs, with no "same file" line;
* an input that cannot be copied, and a working directory that cannot be made, stop it
  before the command (which never runs), exit 1, saying which;
* the values stay data: a title of `$(touch PWNED)` and `'; touch PWNED #` is exported
  as text, and nothing runs it.

usage: export_prologue.py PIPEC OPS.pipe
"""
import os
import subprocess
import sys
import tempfile

import yaml

pipec, ops = sys.argv[1], sys.argv[2]
failures = []
out = subprocess.run([pipec, "component", "export", ops, "report", "-o", "-"], capture_output=True, text=True)
if out.returncode != 0:
    sys.exit("export failed: " + out.stderr)
command = yaml.safe_load(out.stdout)["implementation"]["container"]["command"]
assert command[:2] == ["sh", "-c"], command[:2]
script, argv = command[2], command[3:]


def run(case, tmp, model_from, model_at, workdir, title):
    """The prologue's words with the placeholders filled in, paths moved into tmp, and the
    op's command replaced by one that leaves a mark, so that whether it ran shows."""
    words, i = [argv[0]], 1
    n = int(argv[i]); words.append(argv[i]); i += 1
    for _ in range(n):  # FROM TO: inputPath, then the op's path
        words += [model_from, model_at]; i += 2
    n = int(argv[i]); words.append(argv[i]); i += 1
    for _ in range(n):
        name, value = argv[i], argv[i + 1]
        words += [name, title if isinstance(value, dict) else model_at]; i += 2
    n = int(argv[i]); words.append(argv[i]); i += 1
    for _ in range(n):  # TO FROM: outputPath, then the op's path
        words += [os.path.join(tmp, "kfp-out", "text"), os.path.join(tmp, "r", "text")]; i += 2
    words.append(workdir)
    mark = os.path.join(tmp, "ran")
    words += ["sh", "-c", 'mkdir -p "$2" && printf %s "$PIPEC_title" > "$1" && cat "$PIPEC_model" > "$2/text"',
              "op", mark, os.path.join(tmp, "r")]
    r = subprocess.run(["/bin/sh", "-c", script] + words, capture_output=True, text=True, cwd=tmp)
    return r, os.path.exists(mark)


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "inputs", "model", "data")
    os.makedirs(os.path.dirname(model))
    with open(model, "w") as f:
        f.write("weights")
    title = "$(touch PWNED)'; touch PWNED #\""
    # The default: KFP placed the input where the op reads it.
    r, ran = run("same", tmp, model, model, os.path.join(tmp, "work"), title)
    if r.returncode != 0 or not ran:
        failures.append(f"default input path: exit {r.returncode}, ran {ran}: {r.stderr}")
    if "same file" in r.stderr or r.stderr:
        failures.append(f"default input path: stderr {r.stderr!r}")
    with open(os.path.join(tmp, "ran")) as f:
        if f.read() != title:
            failures.append("the title did not reach the command as its text")
    if os.path.exists(os.path.join(tmp, "PWNED")) or os.path.exists(os.path.join(tmp, "work", "PWNED")):
        failures.append("a value ran as code")
    with open(os.path.join(tmp, "kfp-out", "text")) as f:
        if f.read() != "weights":
            failures.append("the output was not copied to KFP's path")

with tempfile.TemporaryDirectory() as tmp:
    r, ran = run("copy", tmp, os.path.join(tmp, "missing"), os.path.join(tmp, "at", "data"), "", "t")
    if r.returncode != 1 or ran or "pipec: cannot place the input" not in r.stderr:
        failures.append(f"failing copy: exit {r.returncode}, ran {ran}, stderr {r.stderr!r}")

with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "m")
    with open(model, "w") as f:
        f.write("w")
    blocker = os.path.join(tmp, "file")
    open(blocker, "w").close()
    r, ran = run("mkdir", tmp, model, os.path.join(tmp, "at", "data"), os.path.join(blocker, "work"), "t")
    if r.returncode != 1 or ran or "pipec: cannot make or enter the working directory" not in r.stderr:
        failures.append(f"failing mkdir: exit {r.returncode}, ran {ran}, stderr {r.stderr!r}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
