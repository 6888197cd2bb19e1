#!/usr/bin/python3
"""Round trip of `pipec component export`: each op exported as a component.yaml loads in
kfp 1.8.22 and kfp 2.17 with their own loaders and compiles into their pipelines.

Usage: export_roundtrip.py PIPEC TOOLS_DIR SDK_DIR OUT_DIR PROGRAM.pipe OP...

TOOLS_DIR: the shared tools (kfp-v2-validate vendors kfp 2.17.0; validate-workflow checks
Argo). SDK_DIR: sdk/python of kubeflow/pipelines at tag 1.8.22, run under Debian's python3
with kfp_load.py's stand-ins for the packages Debian lacks, and the vendored kfp 2.17's
generated protobuf modules (kfp.pipeline_spec, google.rpc) and docstring_parser for the
ones kfp 1.8.22's compiler needs.

For each OP: `pipec component export PROGRAM.pipe OP -o OUT_DIR/OP.yaml`; then, per SDK, a
pipeline that calls the component with a value for every input without a default (files
from an importer in kfp 2.17, a constant in kfp 1.8.22, as each SDK passes one), and, when
the op has a file output and a file input, a second call fed by the first. kfp 2.17 compiles
it (kfp.compiler.Compiler) and kfp-v2-validate checks the result; kfp 1.8.22 compiles it
(Compiler._create_workflow, what dsl-compile runs) and validate-workflow checks the Argo
workflow. Exit 0 when all pass; 1 on a failure; 77 ("skipped") when SDK_DIR is empty or
kfp 1.8.22 cannot be imported from it, after the kfp 2.17 half has passed.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# A value for an input of each KFP type, as Python source.
VALUES = {"Integer": "1", "Float": "0.5", "Boolean": "True", "String": "'x \"q\" $(id) {{y}}'",
          "JsonArray": "[1, 2]", "JsonObject": "{'a': 1}"}

CALLS = r'''
import yaml
spec = yaml.safe_load(open(COMPONENT))
inputs = spec.get("inputs") or []
outputs = spec.get("outputs") or []
file_out = next((o["name"] for o in outputs if "type" not in o), None)
def arguments(file_value):
    args = {}
    for i in inputs:
        if "default" in i:
            continue
        key = i["name"]
        args[key] = file_value if "type" not in i else eval(VALUES[i["type"]])
    return args
'''

KFP2 = CALLS + r'''
from kfp import compiler, components, dsl
op = components.load_component_from_file(COMPONENT)

@dsl.pipeline(name="roundtrip")
def roundtrip():
    data = dsl.importer(artifact_uri="gs://bucket/data", artifact_class=dsl.Artifact).output
    first = op(**arguments(data))
    if file_out and any("type" not in i and "default" not in i for i in inputs):
        op(**arguments(first.outputs[file_out]))

compiler.Compiler().compile(roundtrip, OUT)
'''

KFP1 = CALLS + r'''
import importlib.abc, importlib.machinery
src = open(os.path.join(HERE, "kfp_load.py")).read()
scope = {"__name__": "kfp_load_module"}
exec(compile(src.replace("\nsys.exit(main())\n", "\n").replace("\nmain()\n", "\n"), "kfp_load.py", "exec"), scope)
VENDOR = os.path.join(TOOLS, "kfp-v2-validate", "vendor")

class Vendored(importlib.abc.MetaPathFinder):
    """kfp.pipeline_spec and google.rpc from kfp 2.17's vendored copy (protobuf modules)."""
    def find_spec(self, name, path, target=None):
        if name == "google.rpc":
            return importlib.machinery.PathFinder.find_spec(name, [os.path.join(VENDOR, "google")])
        if name == "kfp.pipeline_spec":
            return importlib.machinery.PathFinder.find_spec(name, [os.path.join(VENDOR, "kfp")])
        return None

sys.path.insert(0, SDK)
sys.path.append(PYLIB)  # docstring_parser only
sys.meta_path.insert(0, scope["_Finder"]())
sys.meta_path.insert(0, Vendored())
import warnings
warnings.simplefilter("ignore")
try:
    from kfp import compiler, components, dsl
except ImportError as e:
    print("IMPORT", e)
    sys.exit(77)
op = components.load_component_from_file(COMPONENT)

@dsl.pipeline(name="roundtrip")
def roundtrip():
    first = op(**arguments("file text"))
    if file_out and any("type" not in i and "default" not in i for i in inputs):
        op(**arguments(first.outputs[file_out]))

from kfp.compiler import _k8s_helper  # noqa: F401
workflow = compiler.Compiler()._create_workflow(roundtrip)
with open(OUT, "w") as f:
    yaml.safe_dump(workflow, f, sort_keys=True)
'''


def run_python(code, env_dir, **names):
    prelude = "import os, sys\n" + "".join(f"{k} = {v!r}\n" for k, v in names.items())
    prelude += f"VALUES = {VALUES!r}\nHERE = {HERE!r}\n"
    path = os.path.join(env_dir, names["NAME"] + ".py")
    with open(path, "w") as f:
        f.write(prelude + code)
    return subprocess.run(["/usr/bin/python3", path], capture_output=True, text=True, timeout=600)


def main():
    pipec, tools, sdk, out, program = sys.argv[1:6]
    ops = sys.argv[6:]
    os.makedirs(out, exist_ok=True)
    pylib = os.path.join(out, "pylib")
    os.makedirs(pylib, exist_ok=True)
    link = os.path.join(pylib, "docstring_parser")
    if not os.path.exists(link):
        os.symlink(os.path.join(tools, "kfp-v2-validate", "vendor", "docstring_parser"), link)
    failed, skipped = 0, False
    for op in ops:
        component = os.path.join(out, op + ".yaml")
        r = subprocess.run([pipec, "component", "export", program, op, "-o", component],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"fail {op}: export: {r.stderr.strip()}")
            failed += 1
            continue
        # kfp 2.17: load, compile, validate.
        v2 = os.path.join(out, op + ".kfp2.yaml")
        r = run_python("import sys\nsys.path.insert(0, os.path.join(TOOLS, 'kfp-v2-validate', 'vendor'))\n" + KFP2,
                       out, NAME=op + "_kfp2", COMPONENT=component, OUT=v2, TOOLS=tools)
        if r.returncode != 0:
            print(f"fail {op}: kfp 2.17: {r.stderr.strip().splitlines()[-1:]}")
            failed += 1
            continue
        r = subprocess.run([os.path.join(tools, "kfp-v2-validate", "validate"), "-q", v2],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"fail {op}: kfp-v2-validate: {(r.stdout + r.stderr).strip()}")
            failed += 1
            continue
        print(f"ok {op}: kfp 2.17 loads and compiles it; kfp-v2-validate passes")
        # kfp 1.8.22: load, compile (dsl-compile's compiler), validate the workflow.
        if not sdk:
            skipped = True
            continue
        v1 = os.path.join(out, op + ".kfp1.yaml")
        r = run_python(KFP1, out, NAME=op + "_kfp1", COMPONENT=component, OUT=v1, TOOLS=tools, SDK=sdk,
                       PYLIB=pylib)
        if r.returncode == 77:
            print(f"skipped {op}: kfp 1.8.22 cannot be imported from '{sdk}': {r.stdout.strip()}")
            skipped = True
            continue
        if r.returncode != 0:
            print(f"fail {op}: kfp 1.8.22: {r.stderr.strip().splitlines()[-1:]}")
            failed += 1
            continue
        r = subprocess.run([os.path.join(tools, "validate-workflow", "validate"), v1],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"fail {op}: validate-workflow: {(r.stdout + r.stderr).strip()}")
            failed += 1
            continue
        print(f"ok {op}: kfp 1.8.22 loads and compiles it; validate-workflow passes")
    if failed:
        return 1
    if skipped:
        print("skipped: kfp 1.8.22's half (set PIPEC_KFP_SDK_DIR to sdk/python of "
              "kubeflow/pipelines at tag 1.8.22)")
        return 77
    return 0


sys.exit(main())
