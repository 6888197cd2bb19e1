#!/usr/bin/python3
"""volume_forms_test.py PIPEC VALIDATE_ARGO VALIDATE_KFPV2: the forms of a container op's
`volumes` (docs/language.md): a claim's sub-path, a read-only mount, memory-backed and sized
emptyDirs, a generic ephemeral volume. Argo: each in the pod, valid against Argo's schema;
KFP v2: each in the kfp-kubernetes platform spec, loaded by kfp 2.17, and a read-only claim
a located error naming the target; run --local: the sub-path is that directory of the
mapped one, the read-only mount refuses a write, and a note says once that the memory
volume's size and medium are not applied."""
import os
import subprocess
import sys
import tempfile

import yaml

PROGRAM = """op w() {
  image "busybox"
  command "echo hi > /data/out.txt && echo s > /scratch/x && if echo no > /ro/y; then exit 3; fi"
  volumes {"/data": "pvc:shared/runs/a", %s"/scratch": "memory:1Gi", "/big": "empty:2Gi", "/tmpvol": "ephemeral:10Gi"}
}
pipeline p { step a = w() }
"""


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def main():
    pipec, validate_argo, validate_v2 = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        full, portable = os.path.join(tmp, "full.pipe"), os.path.join(tmp, "portable.pipe")
        open(full, "w").write(PROGRAM % '"/ro": "pvc:shared:ro", ')
        open(portable, "w").write(PROGRAM % "")
        argo = os.path.join(tmp, "full.yaml")
        r = run(pipec, "build", full, "-o", argo, "-q")
        if r.returncode != 0 or run(validate_argo, argo).returncode != 0:
            failures.append("argo: " + r.stderr + run(validate_argo, argo).stdout)
        else:
            t = next(t for t in yaml.safe_load(open(argo))["spec"]["templates"] if t["name"] == "w")
            mounts = {m["mountPath"]: m for m in t["container"]["volumeMounts"]}
            volumes = {v["name"]: v for v in t["volumes"]}
            checks = {
                "subPath": mounts["/data"].get("subPath") == "runs/a",
                "readOnly": mounts["/ro"].get("readOnly") is True,
                "memory": volumes[mounts["/scratch"]["name"]]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"},
                "sized emptyDir": volumes[mounts["/big"]["name"]]["emptyDir"] == {"sizeLimit": "2Gi"},
                "ephemeral": volumes[mounts["/tmpvol"]["name"]]["ephemeral"]["volumeClaimTemplate"]["spec"]
                ["resources"]["requests"]["storage"] == "10Gi",
            }
            failures += ["argo: " + k for k, ok in checks.items() if not ok]
        spec = os.path.join(tmp, "portable.yaml")
        r = run(pipec, "build", "--target", "kfp-v2", portable, "-o", spec, "-q")
        if r.returncode != 0 or run(validate_v2, spec).returncode != 0:
            failures.append("kfp-v2: " + r.stderr + run(validate_v2, spec).stdout)
        else:
            p = list(yaml.safe_load_all(open(spec)))[1]["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-w"]
            checks = {
                "subPath": p["pvcMount"][0].get("subPath") == "runs/a",
                "memory": {"medium": "Memory", "mountPath": "/scratch", "sizeLimit": "1Gi",
                           "volumeName": "vol-1"} in p["emptyDirMounts"],
                "ephemeral": p["genericEphemeralVolume"][0]["size"] == "10Gi",
            }
            failures += ["kfp-v2: " + k for k, ok in checks.items() if not ok]
        r = run(pipec, "build", "--target", "kfp-v2", full, "-o", os.path.join(tmp, "x.yaml"), "-q")
        if r.returncode == 0 or "full.pipe:1:4: error: on the kfp-v2 target op 'w' cannot mount '/ro' read-only" not in r.stderr:
            failures.append("kfp-v2 read-only refusal: " + r.stderr)
        host = os.path.join(tmp, "host")
        os.makedirs(host)
        r = run(pipec, "run", "--local", full, "--volume", "shared=" + host, "--run-dir", os.path.join(tmp, "run"), "-q")
        if r.returncode != 0:
            failures.append("run --local: " + r.stdout + r.stderr)
        # What it does not apply is said once a run (docs/local.md): the memory volume's size and medium.
        if (r.stdout + r.stderr).count("its size and its medium (a tmpfs) are not applied") != 1:
            failures.append("run --local: no single note that a memory volume's size and medium are not applied")
        if not os.path.exists(os.path.join(host, "runs", "a", "out.txt")):
            failures.append("run --local: the sub-path is not the mapped directory's runs/a")
        if os.path.exists(os.path.join(host, "y")):
            failures.append("run --local: the read-only mount took a write")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
