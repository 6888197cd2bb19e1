#!/usr/bin/python3
"""pipec fmt over every .pipe of the repository (tests/fmt/CMakeLists.txt).

usage: fmt_test.py PIPEC ROOT
For each program: `pipec fmt` is idempotent (formatting the result changes nothing), and
the formatted program means the same: `pipec build` writes the same bytes for both (Argo
and KFP v2 targets), or `pipec check` reports the same messages (line and column aside).
A program with a syntax error is refused by fmt with check's diagnostics.
"""
import glob
import os
import re
import subprocess
import sys

PIPEC, ROOT = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(ROOT, "dsl-examples", "*.pipe")) +
               glob.glob(os.path.join(ROOT, "stdlib", "*.pipe")) +
               glob.glob(os.path.join(ROOT, "tests", "**", "*.pipe"), recursive=True))
failures, changed, refused = [], 0, 0


def run(*args, cwd=None):
    return subprocess.run([PIPEC, *args], capture_output=True, cwd=cwd)


def messages(stderr, name):
    # Diagnostics without their places: "file:L:C: error: text" -> "error: text".
    text = stderr.decode(errors="replace").replace(name, "FILE")
    return [re.sub(r"^FILE:\d+:\d+: ", "", line) for line in text.splitlines()
            if re.match(r"^FILE:\d+:\d+: (error|warning|note)", line)]


for path in files:
    rel = os.path.relpath(path, ROOT)
    first = run("fmt", path)
    check = run("check", path)
    if first.returncode != 0:
        # Only a program the parser refuses may be refused, with the same diagnostics.
        if messages(first.stderr, path) != messages(check.stderr, path) or check.returncode == 0:
            failures.append(f"{rel}: fmt refused a program: {first.stderr.decode()[:300]}")
        refused += 1
        continue
    directory, name = os.path.split(path)
    twin = os.path.join(directory, f".fmt-{os.getpid()}-{name}")
    try:
        with open(twin, "wb") as f:
            f.write(first.stdout)
        second = run("fmt", twin)
        if second.stdout != first.stdout:
            failures.append(f"{rel}: not idempotent")
        with open(path, "rb") as f:
            if f.read() != first.stdout:
                changed += 1
        for target in ("kfp-v1", "kfp-v2"):
            a = run("build", "--target", target, path, "-o", "-", "-q", "--allow-oversize")
            b = run("build", "--target", target, twin, "-o", "-", "-q", "--allow-oversize")
            if a.returncode != b.returncode or a.stdout != b.stdout:
                failures.append(f"{rel}: --target {target} builds differently after fmt")
            elif a.returncode != 0 and messages(a.stderr, path) != messages(b.stderr, twin):
                failures.append(f"{rel}: --target {target} reports other errors after fmt")
    finally:
        os.unlink(twin)

for f in failures:
    print("FAIL:", f)
print(f"{len(files)} programs: {changed} laid out anew, {refused} refused (syntax errors), "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
