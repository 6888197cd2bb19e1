#!/usr/bin/python3
"""workspace_test.py PIPEC LAUNCHER VALIDATE_ARGO VALIDATE_KFPV2 EXAMPLE: the run's workspace
(docs/language.md, "The run's workspace") in dsl-examples/workspace.pipe, where two container
steps and an mpi_job share it. Argo: one volumeClaimTemplates entry with volumeClaimGC
OnWorkflowCompletion, both container pods mount it, and the MPIJob the launcher renders from
the training template's words (the claim reaches it as a --value, from {{workflow.name}})
mounts the run's claim in its launcher and its workers; the workflow and the job validate.
KFP v2: pipelineConfig.workspace as kfp 2.17 writes it, the container tasks given
{{$.workspace_path}} (KFP's driver mounts the claim for them), the training task the run's
resource name; kfp 2.17 loads it. run --local: RUN_DIR/workspace is every step's, so the last
step reads the first step's file and the MPI ranks'. And the located errors."""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

RUN = "workspace-x7k2p"  # a workflow's name, as Argo makes it from generateName


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def check_argo(pipec, launcher, validate, example, tmp, failures):
    out = os.path.join(tmp, "wf.yaml")
    r = run(pipec, "build", example, "-o", out, "-q")
    v = run(validate, out)
    if r.returncode != 0 or v.returncode != 0:
        failures.append("argo build/validate: " + r.stderr + v.stdout)
        return
    spec = yaml.safe_load(open(out))["spec"]
    claims = spec.get("volumeClaimTemplates", [])
    if [c["metadata"]["name"] for c in claims] != ["kfp-workspace"]:
        failures.append("argo: not one claim template kfp-workspace: %r" % claims)
    elif claims[0]["spec"] != {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "10Gi"}}}:
        failures.append("argo: claim spec %r" % claims[0]["spec"])
    if spec.get("volumeClaimGC") != {"strategy": "OnWorkflowCompletion"}:
        failures.append("argo: volumeClaimGC %r" % spec.get("volumeClaimGC"))
    templates = {t["name"]: t for t in spec["templates"]}
    for name in ("prepare", "summarize"):
        mounts = templates[name]["container"].get("volumeMounts", [])
        if {"name": "kfp-workspace", "mountPath": "/kfp-workspace"} not in mounts:
            failures.append("argo: %s does not mount the workspace: %r" % (name, mounts))
    # The training template's words, as Argo fills them in; the launcher renders the job.
    words = [w.replace("{{workflow.name}}", RUN).replace("{{pod.name}}", RUN + "-123")
             for w in templates["train"]["container"]["args"]]
    if any("{{" in w for w in words):
        failures.append("argo: a word of the training template is left with a tag: %r" % words)
        return
    r = run(launcher, *words, "--dry-run")
    if r.returncode != 0:
        failures.append("launcher --dry-run: " + r.stderr)
        return
    job = json.loads(r.stdout)
    job_file = os.path.join(tmp, "mpijob.json")
    json.dump(job, open(job_file, "w"))
    v = run(validate, job_file)
    if v.returncode != 0:
        failures.append("the rendered MPIJob does not validate: " + v.stdout)
    for role in ("Launcher", "Worker"):
        pod = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        names = [vol["name"] for vol in pod.get("volumes", [])
                 if vol.get("persistentVolumeClaim", {}).get("claimName") == RUN + "-kfp-workspace"]
        mounts = [m for m in pod["containers"][0].get("volumeMounts", [])
                  if m["name"] in names and m["mountPath"] == "/kfp-workspace"]
        if len(names) != 1 or len(mounts) != 1:
            failures.append("MPIJob %s does not mount the claim %s-kfp-workspace: %r" % (role, RUN, pod))


def check_kfpv2(pipec, validate, example, tmp, failures):
    out = os.path.join(tmp, "v2.yaml")
    r = run(pipec, "build", "--target", "kfp-v2", example, "-o", out, "-q")
    v = run(validate, out)
    if r.returncode != 0 or v.returncode != 0:
        failures.append("kfp-v2 build/validate: " + r.stderr + v.stdout + v.stderr)
        return
    spec, platform = list(yaml.safe_load_all(open(out)))
    config = platform["platforms"]["kubernetes"].get("pipelineConfig", {})
    if config.get("workspace") != {"size": "10Gi", "kubernetes": {"pvcSpecPatch": {"accessModes": ["ReadWriteMany"]}}}:
        failures.append("kfp-v2: pipelineConfig.workspace %r" % config)
    tasks = spec["root"]["dag"]["tasks"]
    for name in ("prepare", "summarize"):
        given = tasks[name].get("inputs", {}).get("parameters", {}).get("pipec-workspace")
        if given != {"runtimeValue": {"constant": "{{$.workspace_path}}"}}:
            failures.append("kfp-v2: task %s is not given the workspace path: %r" % (name, given))
    given = tasks["train"]["inputs"]["parameters"].get("pipec-run-name")
    if given != {"runtimeValue": {"constant": "{{$.pipeline_job_resource_name}}"}}:
        failures.append("kfp-v2: the training task is not given the run's name: %r" % given)
    args = spec["deploymentSpec"]["executors"]["exec-train"]["container"]["args"]
    if "workspace={{$.inputs.parameters['pipec-run-name']}}-kfp-workspace:/kfp-workspace" not in args:
        failures.append("kfp-v2: the launcher is not given the workspace entry: %r" % args)


def check_local(pipec, example, tmp, failures):
    rd = os.path.join(tmp, "run")
    r = run(pipec, "run", "--local", example, "--run-dir", rd, "-q")
    summary = json.load(open(os.path.join(rd, "summary.json"))) if os.path.exists(os.path.join(rd, "summary.json")) else {}
    if r.returncode != 0:
        failures.append("run --local: " + r.stdout + r.stderr)
        return
    if (r.stdout + r.stderr).count("the run's workspace is the folder RUN_DIR/workspace in a local run") != 1:
        failures.append("run --local: no single note that the workspace is RUN_DIR/workspace")
    log = open(os.path.join(rd, "steps", "summarize", "log")).read()
    lines = open(os.path.join(rd, "steps", "summarize", "outputs", "lines")).read()
    if lines != "100" or "rank 0 read 100 rows" not in log or "rank 1 read 100 rows" not in log:
        failures.append("run --local: summarize did not read the workspace: %r %r %r" % (lines, log, summary))
    if not os.path.exists(os.path.join(rd, "workspace", "data", "rows.txt")):
        failures.append("run --local: RUN_DIR/workspace holds no data/rows.txt")


ERRORS = [
    # (program, target, expected text)
    ("op w() {\n  image \"busybox\"\n  command \"true\"\n  volumes {\"/ws\": \"workspace\"}\n}\n"
     "pipeline p { step a = w() }\n", "kfp-v1",
     "x.pipe:6:19: error: step 'a' mounts the run's workspace, but pipeline 'p' (the one built) declares none"),
    ("op w() {\n  image \"busybox\"\n  command \"true\"\n  volumes {\"/ws\": \"workspace\"}\n}\n"
     "pipeline p {\n  settings { workspace \"1Gi\" }\n  step a = w()\n}\n", "kfp-v2",
     "x.pipe:1:4: error: on the kfp-v2 target op 'w' cannot mount the run's workspace at '/ws'"),
    ("use arena\npipeline p {\n  param ws: string = \"/ws\"\n  settings { workspace \"1Gi\" }\n"
     "  step t = mpi_job(image: \"i\", command: \"true\", workspace: ws)\n}\n", "kfp-v1",
     "x.pipe:5:60: error: 'workspace' of mpi_job must be a literal mount path"),
    ("pipeline p {\n  settings { workspace {size: \"0Gi\"} }\n}\n", "kfp-v1",
     "x.pipe:2:31: error: 'workspace' size must be a literal string"),
    ("pipeline p {\n  settings { workspace {size: \"1Gi\", access_mode: \"ReadOnlyMany\"} }\n}\n", "kfp-v1",
     "x.pipe:2:51: error: 'workspace' access_mode must be a literal string"),
]


def check_errors(pipec, tmp, failures):
    for program, target, expected in ERRORS:
        path = os.path.join(tmp, "x.pipe")
        open(path, "w").write(program)
        r = run(pipec, "build", "--target", target, "x.pipe", "-o", "x.yaml", "-q", cwd=tmp)
        if r.returncode == 0 or expected not in r.stderr:
            failures.append("error %r: %s" % (expected, r.stderr))


def main():
    pipec, launcher, validate_argo, validate_v2, example = sys.argv[1:6]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        check_argo(pipec, launcher, validate_argo, example, tmp, failures)
        check_kfpv2(pipec, validate_v2, example, tmp, failures)
        check_local(pipec, example, tmp, failures)
        check_errors(pipec, tmp, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
