#!/usr/bin/python3
"""values_test.py PIPEC values.pipe: compiles values.pipe with --target kfp-v2, then runs each
executor's command line with the real /bin/sh after doing what KFP's launcher does (replace
`{{$.inputs.parameters['x']}}` and `{{$.outputs.parameters['o'].output_file}}` in every
word, kubeflow/pipelines backend/src/v2/component/launcher_v2.go executeV2) with hostile
values: the process must get exactly the value, and nothing in it may run."""
import os
import re
import subprocess
import sys
import tempfile

import yaml

VALUES = [
    "plain",
    "a'b\"c",
    "$(touch {canary})",
    "`touch {canary}`",
    "line1\nline2\n",
    "{{x}} and {{ y }}",
    "{{$.inputs.parameters['other']}}",
    "  spaces  ",
    "",
    "\\",
    "*",
    "; touch {canary} #",
    "-n",
]

PLACEHOLDER = re.compile(r"\{\{\$\.(inputs\.parameters\['([^']*)'\]|outputs\.parameters\['([^']*)'\]\.output_file)\}\}")


def main():
    pipec, source = sys.argv[1], sys.argv[2]
    spec_text = subprocess.run([pipec, "build", "--target", "kfp-v2", source, "-o", "-", "-q"],
                               check=True, capture_output=True, text=True).stdout
    spec = next(yaml.safe_load_all(spec_text))
    executors = spec["deploymentSpec"]["executors"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        canary = os.path.join(tmp, "pwned")
        for raw in VALUES:
            value = raw.replace("{canary}", canary)
            for name, executor in sorted(executors.items()):
                c = executor["container"]
                argv = c.get("command", []) + c.get("args", [])
                outputs = {}

                def substitute(m):
                    if m.group(2) is not None:
                        return value  # every op here takes one parameter, x
                    path = os.path.join(tmp, "out-" + m.group(3))
                    outputs[m.group(3)] = path
                    return path
                # One pass, as KFP's launcher does for a word holding one placeholder.
                argv = [PLACEHOLDER.sub(substitute, word) for word in argv]
                env = {"PATH": os.environ["PATH"]}
                for e in c.get("env", []):
                    env[e["name"]] = e["value"]
                r = subprocess.run(argv, capture_output=True, env=env, cwd=tmp)
                out = r.stdout.decode()
                expected = {
                    "exec-exec-word": value + "|[" + value + "]",
                    "exec-shell-script": value + "|" + value + "|" + value,
                    "exec-env-value": value,
                    "exec-output-file": "",
                }[name]
                ok = r.returncode == 0 and out == expected and not os.path.exists(canary)
                if name == "exec-output-file":
                    with open(outputs["out"]) as f:
                        # One trailing newline dropped, as the Argo target and a local
                        # run read an output (docs/kfp-v2.md).
                        want = value[:-1] if value.endswith("\n") else value
                        ok = ok and f.read() == want
                if not ok:
                    failures += 1
                    print(f"FAIL {name} with {value!r}: rc={r.returncode} stdout={out!r} "
                          f"stderr={r.stderr.decode()!r} (expected {expected!r})")
    if failures:
        sys.exit(1)
    print(f"ok: {len(VALUES)} values through {len(executors)} executors")


if __name__ == "__main__":
    main()
